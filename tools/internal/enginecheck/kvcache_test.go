package enginecheck

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/gguf"
	"github.com/servebench/servebench/internal/plan"
)

// ollamaKVLines are the lines Ollama 0.17.4 (llama.cpp runner, CPU) logged
// for the test model (gguf.DefaultLlama) at each slot count and num_ctx.
var ollamaKVLines = []struct {
	parallel, numCtx int
	line             string
}{
	{1, 2048, "llama_kv_cache: size =   16.00 MiB (  2048 cells,   8 layers,  1/1 seqs), K (f16):    8.00 MiB, V (f16):    8.00 MiB"},
	{1, 4096, "llama_kv_cache: size =   32.00 MiB (  4096 cells,   8 layers,  1/1 seqs), K (f16):   16.00 MiB, V (f16):   16.00 MiB"},
	{4, 2048, "llama_kv_cache: size =   64.00 MiB (  2048 cells,   8 layers,  4/4 seqs), K (f16):   32.00 MiB, V (f16):   32.00 MiB"},
	{4, 4096, "llama_kv_cache: size =  128.00 MiB (  4096 cells,   8 layers,  4/4 seqs), K (f16):   64.00 MiB, V (f16):   64.00 MiB"},
	// num_ctx 1000 is padded to 1024 cells per slot.
	{1, 1000, "llama_kv_cache: size =    8.00 MiB (  1024 cells,   8 layers,  1/1 seqs), K (f16):    4.00 MiB, V (f16):    4.00 MiB"},
	{3, 1000, "llama_kv_cache: size =   24.00 MiB (  1024 cells,   8 layers,  3/3 seqs), K (f16):   12.00 MiB, V (f16):   12.00 MiB"},
}

// TestPlanMatchesOllamaLog plans the test model from its GGUF header as
// `servebench plan --engine ollama --parallel P --context C --json` does and
// checks the JSON against each recorded log line.
func TestPlanMatchesOllamaLog(t *testing.T) {
	s := testModel(t)
	for _, c := range ollamaKVLines {
		l, ok, err := ParseKVCacheLine("time=... " + c.line)
		if !ok || err != nil {
			t.Fatalf("%q: ok %v, err %v", c.line, ok, err)
		}
		kv := planKV(t, s, c.parallel, c.numCtx, "")
		if got := CheckKVCache(l, kv); !got.OK() {
			t.Errorf("parallel %d, num_ctx %d: %v", c.parallel, c.numCtx, got.Problems)
		}
	}
}

// TestCheckKVCacheCatches shows that each kind of disagreement fails.
func TestCheckKVCacheCatches(t *testing.T) {
	s := testModel(t)
	logged := func(i int) KVCacheLine {
		l, _, err := ParseKVCacheLine(ollamaKVLines[i].line)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, c := range []struct {
		name string
		log  KVCacheLine
		kv   PlanKV
		want string
	}{
		// Planned for 4 slots, the engine ran 1: size, cells and slots differ.
		{"slots", logged(1), planKV(t, s, 4, 4096, ""), "size: the engine logged 32.00 MiB, the plan predicts 128.00 MiB"},
		// The right slots but another context.
		{"context", logged(3), planKV(t, s, 4, 2048, ""), "cells: the engine logged 4096 cells x 4 seqs = 16384, the plan predicts 8192"},
		// A q8_0 plan against an f16 cache.
		{"type", logged(3), planKV(t, s, 4, 4096, "q8_0"), "type: the engine logged f16, the plan uses q8_0"},
		// A cache over fewer layers than the plan's.
		{"layers", func() KVCacheLine { l := logged(3); l.Layers = 7; return l }(), planKV(t, s, 4, 4096, ""), "layers: the engine logged 7"},
	} {
		got := CheckKVCache(c.log, c.kv)
		if got.OK() || !strings.Contains(strings.Join(got.Problems, "\n"), c.want) {
			t.Errorf("%s: problems %q, want one containing %q", c.name, got.Problems, c.want)
		}
		var b bytes.Buffer
		if err := RenderKV(&b, got); err != nil || !strings.Contains(b.String(), "FAIL, ") {
			t.Errorf("%s: rendered %q, want a FAIL verdict", c.name, b.String())
		}
	}
}

func TestParseKVCacheLine(t *testing.T) {
	for _, c := range []struct {
		name    string
		line    string
		ok, err bool
		want    KVCacheLine
	}{
		// The line as Ollama's server log carries it (runner output, as is).
		{"ollama", "llama_kv_cache: size =  128.00 MiB (  4096 cells,   8 layers,  4/4 seqs), K (f16):   64.00 MiB, V (f16):   64.00 MiB\n",
			true, false, KVCacheLine{SizeMiB: "128.00", Cells: 4096, Layers: 8, Seqs: 4, KType: "f16", VType: "f16"}},
		// Quantized cache, more than 999 MiB, more than 999,999 cells.
		{"wide", "llama_kv_cache: size = 4352.00 MiB (1048576 cells,  32 layers,  1/1 seqs), K (q8_0): 2176.00 MiB, V (q8_0): 2176.00 MiB",
			true, false, KVCacheLine{SizeMiB: "4352.00", Cells: 1048576, Layers: 32, Seqs: 1, KType: "q8_0", VType: "q8_0"}},
		// The buffer line above it is not the size line.
		{"buffer", "llama_kv_cache:        CPU KV buffer size =   128.00 MiB", false, false, KVCacheLine{}},
		// A size line in another format fails rather than being skipped.
		{"changed", "llama_kv_cache: size = 128 MiB, 4096 cells", true, true, KVCacheLine{}},
	} {
		got, ok, err := ParseKVCacheLine(c.line)
		got.Text = ""
		if ok != c.ok || (err != nil) != c.err || (err == nil && got != c.want) {
			t.Errorf("%s: got %+v, %v, %v; want %+v, %v, error %v", c.name, got, ok, err, c.want, c.ok, c.err)
		}
	}
}

func TestLastKVCache(t *testing.T) {
	log := "time=1 msg=load\n" + ollamaKVLines[3].line + "\ntime=2 msg=reload\n" + ollamaKVLines[2].line + "\n[GIN] 200\n"
	l, err := LastKVCache(strings.NewReader(log))
	if err != nil || l.SizeMiB != "64.00" || l.Cells != 2048 {
		t.Errorf("got %+v, %v; want the reload's 64.00 MiB in 2048 cells", l, err)
	}
	if _, err := LastKVCache(strings.NewReader("time=1 msg=load\n")); err == nil {
		t.Error("a log without a KV-cache line passed")
	}
}

func TestFormatMiB(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		want  string
	}{
		{128 << 20, "128.00"},
		{3 << 19, "1.50"},
		// q8_0 rows (34 B per 32 elements) over 1000 cells: 4.150390625 MiB.
		{2 * 8 * 1000 * 256 / 32 * 34, "4.15"},
		{1<<20 + 5243, "1.01"},  // 1.005000... rounds up
		{1<<20 + 5242, "1.00"},  // 1.004999...
		{(1 << 20) / 8, "0.12"}, // 0.125 exactly: to even, as printf does
	} {
		if got := FormatMiB(c.bytes); got != c.want {
			t.Errorf("FormatMiB(%d) = %s, want %s", c.bytes, got, c.want)
		}
	}
}

func TestReadPlanKVRejects(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"not json", "Model ...", "plan JSON"},
		{"other schema", `{"schema":"servebench.summary/v1"}`, "want \"servebench.plan/v1\""},
		{"no device", `{"schema":"servebench.plan/v1","devices":[]}`, "no supported device"},
	} {
		if _, err := ReadPlanKV([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// testModel writes the GGUF the Ollama scripts serve and reads its header.
func testModel(t *testing.T) *plan.Shape {
	t.Helper()
	f, err := gguf.NewLlama(gguf.DefaultLlama)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	if _, err := f.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	s, err := plan.LoadGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// planKV plans as `servebench plan --engine ollama --parallel P --context C
// --gpu CPU-DDR5-2ch --json` and reads the KV figures back from the JSON.
func planKV(t *testing.T, s *plan.Shape, parallel, numCtx int, kvType string) PlanKV {
	t.Helper()
	dev, ok := plan.FindDevice(plan.Catalog(), "CPU-DDR5-2ch")
	if !ok {
		t.Fatal("catalog has no CPU-DDR5-2ch")
	}
	w := plan.Workload{PromptTokens: 128, OutputTokens: 64, Concurrency: 1, Context: numCtx}
	o := plan.Options{Engine: plan.EngineOllama, KVType: kvType, Parallel: parallel, Headroom: plan.DefaultHeadroom, Eff: plan.DefaultEfficiency()}
	r, err := plan.Plan(s, w, o, []plan.Device{*dev})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := ReadPlanKV(data)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func FuzzParseKVCacheLine(f *testing.F) {
	for _, c := range ollamaKVLines {
		f.Add(c.line)
	}
	f.Add("llama_kv_cache: size = 1.00 MiB (99999999999999999999 cells, 1 layers, 1/1 seqs), K (f16): 1 MiB, V (f16): 1 MiB")
	f.Fuzz(func(t *testing.T, line string) {
		l, ok, err := ParseKVCacheLine(line)
		if ok && err == nil && (l.Cells <= 0 || l.Seqs <= 0 || l.SizeMiB == "") {
			t.Errorf("accepted %q as %+v", line, l)
		}
	})
}
