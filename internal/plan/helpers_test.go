package plan

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\n--- got ---\n%s", name, got)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func loadModel(t *testing.T, name string) *Shape {
	t.Helper()
	s, err := LoadHFModel(filepath.Join("testdata", "models", name), false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func device(t *testing.T, name string) Device {
	t.Helper()
	d, ok := FindDevice(Catalog(), name)
	if !ok {
		t.Fatalf("no device %q", name)
	}
	return *d
}

func defaultOptions(engine string) Options {
	return Options{Engine: engine, Headroom: DefaultHeadroom, Eff: DefaultEfficiency()}
}

func approx(got, want, tol float64) bool {
	if want == 0 {
		return got == 0
	}
	d := (got - want) / want
	return d <= tol && d >= -tol
}
