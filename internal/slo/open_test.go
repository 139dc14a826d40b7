package slo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestOpen: a file wins over a preset of its name, a preset is found by
// name, and what is neither says which.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "named.yaml")
	unnamed := filepath.Join(dir, "mine.yaml")
	const body = "load: {concurrency: [1, 2]}\nslos: ['ttft p95 <= 1s']\n"
	if err := os.WriteFile(named, []byte("name: team\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unnamed, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, spec string
		want       string // the objective's name
		wantErr    func(error) bool
	}{
		{"file's name", named, "team", nil},
		// a file without a name is named after it
		{"file without name", unnamed, "mine", nil},
		{"preset", "chat", "chat", nil},
		{"neither", "chatty", "", func(err error) bool { return errors.Is(err, ErrNoObjective) }},
		// path-like: a file, never a preset
		{"missing file", filepath.Join(dir, "chat.yaml"), "", func(err error) bool { return errors.As(err, new(*fs.PathError)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := Open(c.spec)
			if c.wantErr != nil {
				if !c.wantErr(err) {
					t.Fatalf("err %v (%T)", err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Name != c.want {
				t.Errorf("name %q, want %q", o.Name, c.want)
			}
		})
	}
}
