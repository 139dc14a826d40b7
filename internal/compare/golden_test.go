package compare

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenSides are two runs of a llama.cpp server, the second with a q8_0
// build: at c=1 the change is inside noise, at c=4 TTFT and decode speed
// are clearly worse, and c=8 was measured by A only.
func goldenSides() (*Side, *Side) {
	ra, rb := baseRun(), baseRun()
	ra.Started, rb.Started = "2026-11-30T09:00:00.123Z", "2026-12-01T09:00:00Z"
	rb.Target.Server = map[string]string{"model_id": "llama", "quantization": "q8_0", "runtime": "llama.cpp",
		"runtime_version": "b4000", "max_model_len": "8192", "sampling.temperature": "0.8"}
	c4, c8 := record.Load{Concurrency: 4}, record.Load{Concurrency: 8}
	var a, b []*record.Record
	for i := range 30 {
		t := float64(i) * 300
		a = append(a, req(0, c1, i, t, 100+float64(i%10)*4, 10, 16), req(1, c4, 100+i, t, 150+float64(i%10)*4, 12, 16))
		b = append(b, req(0, c1, i, t, 101+float64(i%10)*4, 10, 16), req(1, c4, 100+i, t, 190+float64(i%10)*4, 14, 16))
		a = append(a, req(2, c8, 200+i, t, 300, 20, 16))
	}
	b = append(b, failed(1, c4, 199, 9000, 30))
	return side("runs/q4", ra, a...), side("runs/q8", rb, b...)
}

func TestGolden(t *testing.T) {
	var gates []Gate
	for _, s := range []string{"ttft p95 +10%", "speed p50 -5%", "e2e p50 +500ms"} {
		g, err := ParseGate(s)
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, g)
	}
	a, b := goldenSides()
	r := Compare(a, b, Options{Gates: gates})
	for name, write := range map[string]func(*bytes.Buffer) error{
		"text.golden": func(w *bytes.Buffer) error { return WriteText(w, r) },
		"json.golden": func(w *bytes.Buffer) error { return WriteJSON(w, r) },
	} {
		var got bytes.Buffer
		if err := write(&got); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run go test -update)", name, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s differs (go test ./internal/compare -run TestGolden -update, then read the diff):\n%s", name, got.String())
		}
	}
}
