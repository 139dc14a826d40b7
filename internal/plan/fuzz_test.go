package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseHFConfig: any bytes give a shape that validates, or an error;
// never a panic or an unbounded allocation.
func FuzzParseHFConfig(f *testing.F) {
	paths, _ := filepath.Glob("testdata/models/*/config.json")
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(llamaTiny))
	f.Add([]byte(`{"model_type": "gemma3", "text_config": {"num_hidden_layers": 1e9}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, approx := range []bool{false, true} {
			s, err := ParseHFConfig(data, approx)
			if err != nil {
				continue
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("parsed shape does not validate: %v", err)
			}
			m := newKVModel(s, KVTypes["fp16"], engineSpecs[EngineVLLM], 1)
			if m.PerToken() < 0 || m.seqBytes(4096) < 0 {
				t.Fatalf("negative KV for %s", data)
			}
		}
	})
}

// FuzzParseDevices: a devices file parses into devices that pass their own
// checks, or fails with an error.
func FuzzParseDevices(f *testing.F) {
	f.Add(catalogYAML)
	f.Add([]byte("devices:\n  - name: x\n    memory_gib: 4\n    bandwidth_gbs: {value: 1, source: s}\n    bf16_tflops: 1\n"))
	f.Add([]byte("devices:\n  - name: x\n    memory_gib: .nan\n"))
	f.Add([]byte("devices: [{name: a, memory_gib: 1e400}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		devs, err := ParseDevices(data)
		if err != nil {
			return
		}
		for i := range devs {
			if err := devs[i].check(); err != nil || devs[i].Usable() <= 0 {
				t.Fatalf("device %+v: %v", devs[i], err)
			}
		}
	})
}

// FuzzSafetensorsHeader: the header reader never panics or allocates past
// its limit.
func FuzzSafetensorsHeader(f *testing.F) {
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Add(append([]byte{60, 0, 0, 0, 0, 0, 0, 0}, `{"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}`...))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadSafetensorsHeader(bytes.NewReader(data))
		if err != nil {
			return
		}
		var sum tensorSum
		h.addTo(&sum, 10)
	})
}

// FuzzParseSummary: a run summary parses and checks, or fails.
func FuzzParseSummary(f *testing.F) {
	if data, err := os.ReadFile("testdata/runs/sim-llama-8b-h100/summary.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"schema": "servebench.summary/v1", "points": [{"load": {"rate": 2}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSummary(data)
		if err != nil {
			return
		}
		for _, p := range s.Points {
			if p.Load.Concurrency <= 0 && p.Load.Rate <= 0 {
				t.Fatal("a point without load passed")
			}
		}
	})
}
