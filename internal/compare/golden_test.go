package compare

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	rb.Target.Server = map[record.ServerKey]string{"model_id": "llama", "quantization": "q8_0", "runtime": "llama.cpp",
		"runtime_version": "b4000", "max_model_len": "8192", "sampling.temperature": "0.8"}
	c4, c8 := record.Load{Concurrency: 4}, record.Load{Concurrency: 8}
	var a, b []*record.Record
	for i := range 400 {
		t, t4 := float64(i)*300, float64(i)*85 // c=4: four requests in flight
		a = append(a, req(0, c1, i, t, 100+float64(i%10)*4, 10, 16), req(1, c4, 1000+i, t4, 150+float64(i%10)*4, 12, 16))
		b = append(b, req(0, c1, i, t, 101+float64(i%10)*4, 10, 16), req(1, c4, 1000+i, t4, 190+float64(i%10)*4, 14, 16))
		a = append(a, req(2, c8, 2000+i, t, 300, 20, 16))
	}
	b = append(b, failed(1, c4, 1999, 17_000, 30))
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

// The page's tables carry what the text says: the uncontrolled
// comparison first, a table per common point, then the gates.
func TestHTMLTables(t *testing.T) {
	g, err := ParseGate("ttft p95 +10%")
	if err != nil {
		t.Fatal(err)
	}
	a, b := goldenSides()
	tables := HTMLTables(Compare(a, b, Options{Gates: []Gate{g}}))
	if len(tables) != 4 {
		t.Fatalf("%d tables, want control, c=1, c=4, gates", len(tables))
	}
	control, c4, gates := tables[0], tables[2], tables[3]
	if control.Title != "NOT A CONTROLLED COMPARISON (--strict refuses it): B (runs/q8) against A (runs/q4)" ||
		len(control.Rows) != 1 || control.Rows[0][0] != "quantization" || control.Notes[0] != "measured by A only, not compared: c=8" {
		t.Errorf("control table %+v", control)
	}
	if c4.Title != "c=4 — A: 400 requests, B: 401 requests (one run each)" || len(c4.Rows) != len(Headline) ||
		c4.Rows[1][0] != "ttft p95" || c4.Rows[1][3] != "+40ms" || c4.Rows[1][6] != "WORSE" {
		t.Errorf("c=4 table %+v", c4)
	}
	// c=4 held its load in both runs: its gate fails on valid evidence,
	// and its table has no INCONCLUSIVE note
	if len(gates.Rows) != 2 || gates.Rows[1][1] != "c=4" || gates.Rows[1][3] != "FAIL" || gates.Rows[0][3] != "ok" ||
		slices.ContainsFunc(c4.Notes, func(n string) bool { return strings.HasPrefix(n, "INCONCLUSIVE") }) {
		t.Errorf("gates %+v", gates.Rows)
	}
}
