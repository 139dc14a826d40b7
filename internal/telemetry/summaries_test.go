package telemetry

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// randomSamples is a run's samples in time order: two server instances
// whose readings lack fields now and then and restart, two sources of two
// GPUs each with and without energy counters and throttle reasons, the
// host, the client and events; moments repeat, so that readings share
// them and land on a window's bounds.
func randomSamples(r *rand.Rand, n int) []Sample {
	opt := func(p float64, v float64) *float64 {
		if r.Float64() < p {
			return nil
		}
		return &v
	}
	hist := func(count float64) *Histogram {
		h := &Histogram{Count: count, Sum: count * 0.2}
		for _, le := range []float64{0.1, 0.5, 1} {
			h.Buckets = append(h.Buckets, Bucket{LE: le, Count: math.Floor(count * le)})
		}
		if r.Float64() < 0.1 {
			h.Buckets = h.Buckets[:2] // a layout that changed
		}
		return h
	}
	counters := map[string]float64{}
	var out []Sample
	t := int64(0)
	for range n {
		t += r.Int64N(3) * 10 // 0: the same moment as the last sample
		switch k := r.IntN(7); k {
		case 0, 1:
			inst := fmt.Sprintf("s%d", k)
			c := counters[inst] + r.Float64()*50
			if r.Float64() < 0.05 {
				c = r.Float64() * 5 // restarted
			}
			counters[inst] = c
			out = append(out, Sample{TNS: t, Source: KindServer, Instance: inst, Server: &Server{
				Running: opt(0.2, float64(r.IntN(8))), Waiting: opt(0.2, float64(r.IntN(4))),
				KVCacheUsage: opt(0.3, r.Float64()), PrefixCacheHitRate: opt(0.7, r.Float64()),
				Preemptions: opt(0.2, math.Floor(c/20)), PromptTokens: opt(0.2, c*10),
				PrefixCacheQueries: opt(0.3, c*5), PrefixCacheHits: opt(0.3, c*2),
				SimClockLost: opt(0.3, c/100), PrefillSeconds: opt(0.3, c/10), PrefillTokens: opt(0.3, c*8),
				TTFT: map[bool]*Histogram{true: hist(c)}[r.Float64() > 0.2], Queue: map[bool]*Histogram{true: hist(c / 2)}[r.Float64() > 0.3],
			}})
		case 2:
			var thr []string
			switch r.IntN(4) {
			case 0:
				thr = nil
			case 1:
				thr = []string{}
			case 2:
				thr = []string{"power_cap"}
			default:
				thr = []string{"sw_thermal", "idle"}
			}
			g := &GPU{Index: r.IntN(2), Name: []string{"", "H100"}[r.IntN(2)], Driver: []string{"", "550"}[r.IntN(2)],
				MemoryUsedBytes: opt(0.2, r.Float64()*8e10), MemoryTotalBytes: opt(0.2, 8e10), Utilization: opt(0.2, r.Float64()),
				PowerW: opt(0.2, 100+r.Float64()*600), EnergyJ: opt(0.5, float64(t)/1e7+r.Float64()), TemperatureC: opt(0.2, 40+r.Float64()*40),
				Throttle: thr}
			out = append(out, Sample{TNS: t, Source: KindGPU, Instance: []string{"nvml", "dcgm:x"}[r.IntN(2)], GPU: g})
		case 3:
			out = append(out, Sample{TNS: t, Source: KindHost, Instance: InstanceProcfs, Host: &Host{
				ServerRSSBytes: opt(0.2, r.Float64()*1e9), ServerCPUPercent: opt(0.2, r.Float64()*100),
				CPUPercent: opt(0.2, r.Float64()*100), StealPercent: opt(0.5, r.Float64()*3), RAMAvailBytes: opt(0.2, r.Float64()*1e10)}})
		case 4:
			out = append(out, Sample{TNS: t, Source: KindClient, Instance: InstanceClient, Client: &Client{CPUPercent: r.Float64() * 100, Goroutines: r.IntN(2000)}})
		case 5:
			kind := []string{EventGap, EventScrapeFailed, EventOOM, EventRecovered}[r.IntN(4)]
			out = append(out, Sample{TNS: t, Source: KindEvent, Instance: "src", Event: &Event{Kind: kind, Source: []string{"", "src"}[r.IntN(2)], Detail: fmt.Sprint("why ", t)}})
		default:
			out = append(out, Sample{TNS: t, Source: KindServer, Instance: "s0", Server: &Server{Engine: "unknown"}})
		}
	}
	return out
}

// TestSummariesMatchBatch: the one-pass Summaries give every window what
// the batch scan over all samples (reference_test.go) gives, figure for
// figure, with windows that overlap, share bounds with readings, hold
// nothing, or cover the run.
func TestSummariesMatchBatch(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		samples := randomSamples(r, 20+r.IntN(200))
		last := samples[len(samples)-1].TNS
		var windows [][2]int64
		for range 1 + r.IntN(6) {
			from := r.Int64N(last + 20)
			from -= from % []int64{1, 10}[r.IntN(2)] // on a reading's moment, or between
			windows = append(windows, [2]int64{from, from + r.Int64N(last/2+20)})
		}
		windows = append(windows, [2]int64{0, last})
		scale := []float64{1, 10, 0}[r.IntN(3)]
		s := NewSummaries(scale, windows...)
		for i := range samples {
			s.Add(&samples[i])
		}
		for i, w := range windows {
			tokens := float64(r.IntN(3)) * 1000
			want := refSummarize(Window{From: w[0], To: w[1], Scale: scale, Samples: samples}, tokens)
			if err := sameFigures(s.Point(i, tokens), want); err != nil {
				t.Fatalf("seed %d window %v: %v", seed, w, err)
			}
			// asked twice, the same
			if err := sameFigures(s.Point(i, tokens), want); err != nil {
				t.Fatalf("seed %d window %v, asked again: %v", seed, w, err)
			}
		}
		if got, want := s.EventLines(), refEventLines(samples, scale); !slices.Equal(got, want) {
			t.Fatalf("seed %d: EventLines\n%q\nwant\n%q", seed, got, want)
		}
	}
}

// sameFigures compares two points' JSON figure by figure; numbers may
// differ in their last bits, since a sum over server instances or GPUs is
// taken in another order.
func sameFigures(got, want *Point) error {
	var g, w any
	for _, c := range []struct {
		p   *Point
		dst *any
	}{{got, &g}, {want, &w}} {
		b, err := json.Marshal(c.p)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, c.dst); err != nil {
			return err
		}
	}
	if !closeJSON(g, w) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		return fmt.Errorf("got\n%s\nwant\n%s", gb, wb)
	}
	return nil
}

func closeJSON(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(x-y) <= 1e-9*math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !closeJSON(v, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !closeJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
