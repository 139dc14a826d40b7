package enginecheck

// Host measurements behind the CPU device entries (docs/devices-ci-host.yaml)
// that `servebench plan --devices` uses to predict Ollama on this machine;
// docs/PERFORMANCE.md has the figures. Run them alone on an idle host:
//
//	(cd tools && go test ./internal/enginecheck -run '^$' -bench Host -benchtime 20x -count 3)
//
// BenchmarkHostMemory reads a buffer once per iteration and reports GB/s,
// as kernel/size/threads:
//
//   - stream: 8-byte loads summed into 8 accumulators, the plain read rate;
//   - q8_0-gemv: the same bytes laid out as a Q8_0 weight matrix (34-byte
//     blocks: a 2-byte scale, 32 int8 quants) read in a GEMV's order, row by
//     row against one hot activation row, each block's quants combined with
//     the activation's in four 8-byte words. It touches what a decode step's
//     matrix-vector products touch, in that order, with a cheap stand-in for
//     the int8 dot product (the arithmetic is not what is measured);
//   - 1GiB is far beyond the caches; 28MiB is the test model's weight size,
//     under the 32 MiB of L3 this host reports: what decode reads if the
//     weights stay cached;
//   - threads split the rows, as llama.cpp's threads do.
//
// BenchmarkHostClock times chains of dependent one-cycle integer operations
// to report the clock the core runs at under load.

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/plan"
)

const (
	q8Block    = 34   // bytes per 32 weights: fp16 scale + 32 int8
	q8Cols     = 1536 // a row as wide as the test model's FFN
	q8RowBytes = q8Cols / 32 * q8Block
	hostBuffer = 1 << 30 // far beyond any cache
	modelBytes = 28 << 20
)

// streamSum adds b's 8-byte words: the plain sequential read. Eight
// accumulators in registers (locals, not an array, which Go keeps on the
// stack) keep the loop's own work well below the memory's.
func streamSum(b []byte) uint64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 uint64
	for len(b) >= 64 {
		_ = b[63] // one bounds check for the eight loads
		s0 += binary.LittleEndian.Uint64(b[0:])
		s1 += binary.LittleEndian.Uint64(b[8:])
		s2 += binary.LittleEndian.Uint64(b[16:])
		s3 += binary.LittleEndian.Uint64(b[24:])
		s4 += binary.LittleEndian.Uint64(b[32:])
		s5 += binary.LittleEndian.Uint64(b[40:])
		s6 += binary.LittleEndian.Uint64(b[48:])
		s7 += binary.LittleEndian.Uint64(b[56:])
		b = b[64:]
	}
	for ; len(b) >= 8; b = b[8:] {
		s0 += binary.LittleEndian.Uint64(b)
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}

// q8GEMV walks whole Q8_0 rows of w against the activation row x (one
// row's worth of blocks), one accumulator per row as a GEMV has, and
// returns a checksum so that nothing is optimized away. Rows as arrays let
// the compiler drop the bounds checks.
func q8GEMV(w, x []byte) uint64 {
	xr := (*[q8RowBytes]byte)(x)
	var sum uint64
	for ; len(w) >= q8RowBytes; w = w[q8RowBytes:] {
		row := (*[q8RowBytes]byte)(w)
		var acc uint64
		for i := 0; i <= q8RowBytes-q8Block; i += q8Block {
			acc += uint64(binary.LittleEndian.Uint16(row[i:]))*uint64(binary.LittleEndian.Uint16(xr[i:])) +
				(binary.LittleEndian.Uint64(row[i+2:]) ^ binary.LittleEndian.Uint64(xr[i+2:])) +
				(binary.LittleEndian.Uint64(row[i+10:]) ^ binary.LittleEndian.Uint64(xr[i+10:])) +
				(binary.LittleEndian.Uint64(row[i+18:]) ^ binary.LittleEndian.Uint64(xr[i+18:])) +
				(binary.LittleEndian.Uint64(row[i+26:]) ^ binary.LittleEndian.Uint64(xr[i+26:]))
		}
		sum += acc
	}
	return sum
}

// sink keeps results alive.
var sink uint64

// parallel runs f over threads contiguous parts of b, split at row bounds.
func parallel(b []byte, threads int, f func([]byte) uint64) uint64 {
	rows := len(b) / q8RowBytes
	var wg sync.WaitGroup
	out := make([]uint64, threads)
	for t := range threads {
		lo, hi := rows*t/threads*q8RowBytes, rows*(t+1)/threads*q8RowBytes
		wg.Go(func() { out[t] = f(b[lo:hi]) })
	}
	wg.Wait()
	var s uint64
	for _, v := range out {
		s += v
	}
	return s
}

// filled returns n bytes, whole rows, written once so that every page is
// mapped before timing.
func filled(n int) []byte {
	b := make([]byte, n/q8RowBytes*q8RowBytes)
	var x uint64 = 0x9e3779b97f4a7c15
	for i := 0; i+8 <= len(b); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(b[i:], x)
	}
	return b
}

func BenchmarkHostMemory(b *testing.B) {
	x := filled(q8RowBytes)
	gemv := func(w []byte) uint64 { return q8GEMV(w, x) }
	for _, size := range []struct {
		name string
		n    int
	}{{"1GiB", hostBuffer}, {"28MiB", modelBytes}} {
		buf := filled(size.n)
		for _, k := range []struct {
			name string
			f    func([]byte) uint64
		}{{"stream", streamSum}, {"q8_0-gemv", gemv}} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/%d", k.name, size.name, threads), func(b *testing.B) {
					b.SetBytes(int64(len(buf)))
					for b.Loop() {
						sink += parallel(buf, threads, k.f)
					}
					b.ReportMetric(float64(len(buf))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
				})
			}
		}
	}
}

// addChain runs n iterations of eight dependent adds and xors: 8n cycles,
// as each has one cycle of latency on current x86-64 cores (the compiler
// keeps all eight; see go tool objdump).
func addChain(n int, y uint64) uint64 {
	x := y
	for range n {
		x += y
		x ^= y
		x += y
		x ^= y
		x += y
		x ^= y
		x += y
		x ^= y
	}
	return x
}

func BenchmarkHostClock(b *testing.B) {
	const n = 100_000_000
	start := time.Now()
	for b.Loop() {
		sink += addChain(n, uint64(b.N)|1)
	}
	b.ReportMetric(8*n*float64(b.N)/time.Since(start).Seconds()/1e9, "GHz")
}

// TestHostKernels checks that the kernels read every byte they are given:
// the row split loses nothing and the GEMV's combination is the reference's.
func TestHostKernels(t *testing.T) {
	buf, x := filled(7*q8RowBytes+100), filled(q8RowBytes)
	var want uint64
	for i := 0; i+8 <= len(buf); i += 8 {
		want += binary.LittleEndian.Uint64(buf[i:])
	}
	if got := streamSum(buf); got != want {
		t.Errorf("streamSum = %d, want %d", got, want)
	}
	var gemv uint64
	for i := 0; i+q8RowBytes <= len(buf); i += q8RowBytes {
		for j := 0; j < q8RowBytes; j += q8Block {
			w, v := buf[i+j:], x[j:]
			gemv += uint64(binary.LittleEndian.Uint16(w)) * uint64(binary.LittleEndian.Uint16(v))
			for k := 2; k < q8Block; k += 8 {
				gemv += binary.LittleEndian.Uint64(w[k:]) ^ binary.LittleEndian.Uint64(v[k:])
			}
		}
	}
	f := func(w []byte) uint64 { return q8GEMV(w, x) }
	for threads := 1; threads <= 3; threads++ {
		if got := parallel(buf, threads, f); got != gemv {
			t.Errorf("%d threads: q8GEMV = %d, want %d", threads, got, gemv)
		}
	}
}

// TestCIHostDevices keeps docs/devices-ci-host.yaml loadable, every number
// the roofline uses sourced, and the predictions docs/PERFORMANCE.md quotes
// for the test model (131-token prompts, 64-token outputs, Ollama with 4
// slots of 4096) what the planner computes from it.
func TestCIHostDevices(t *testing.T) {
	data, err := os.ReadFile("../../../docs/devices-ci-host.yaml")
	if err != nil {
		t.Fatal(err)
	}
	devs, err := plan.ParseDevices(data)
	if err != nil {
		t.Fatal(err)
	}
	s := testModel(t)
	for _, c := range []struct {
		device      string
		users       int
		decodeTPS   float64 // TOK/S/USER
		prefillMS   float64
		decodeBound string
	}{
		{"ci-host-1t", 1, 529.7, 111.6, "memory bandwidth"},
		{"ci-host-1t", 4, 80.5, 111.6, "memory bandwidth"},
		{"ci-host-2t", 1, 793.9, 56.0, "memory bandwidth"},
		{"ci-host-2t", 4, 134.6, 56.0, "memory bandwidth"},
	} {
		d, ok := plan.FindDevice(devs, c.device)
		if !ok {
			t.Fatalf("no %s in the file", c.device)
		}
		if d.BandwidthGBs.Source == "" || d.BF16TFLOPS.Source == "" || d.Kind != plan.KindCPU {
			t.Errorf("%s: kind %s, bandwidth or compute without a source", c.device, d.Kind)
		}
		w := plan.Workload{PromptTokens: 131, OutputTokens: 64, Concurrency: c.users, Context: 4096}
		o := plan.Options{Engine: plan.EngineOllama, Parallel: 4, Headroom: plan.DefaultHeadroom, Eff: plan.DefaultEfficiency()}
		r, err := plan.Plan(s, w, o, []plan.Device{*d})
		if err != nil {
			t.Fatal(err)
		}
		p := r.Devices[0].Perf
		if got := fmt.Sprintf("%.1f %.1f %s", p.DecodeTPS, 1000*p.PrefillS, p.DecodeBound); got != fmt.Sprintf("%.1f %.1f %s", c.decodeTPS, c.prefillMS, c.decodeBound) {
			t.Errorf("%s, %d users: decode tok/s, prefill ms, bound = %s; docs/PERFORMANCE.md says %.1f %.1f %s",
				c.device, c.users, got, c.decodeTPS, c.prefillMS, c.decodeBound)
		}
	}
}
