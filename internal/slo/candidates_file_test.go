package slo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReadCandidatesObjective: an objective file beside the candidates
// file is found from any working directory; a preset is kept by name.
func TestReadCandidatesObjective(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte("slos: ['ttft p95 <= 1s']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ objective, want string }{
		{"mine.yaml", filepath.Join(dir, "mine.yaml")},
		{"chat", "chat"},
		// no such file beside it: kept as written, for Open to refuse
		{"other.yaml", "other.yaml"},
	} {
		file := filepath.Join(dir, "candidates.yaml")
		body := "objective: " + c.objective + "\ncandidates:\n  - name: a\n    url: http://127.0.0.1:8000\n"
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cf, err := ReadCandidates(file)
		if err != nil {
			t.Fatal(err)
		}
		if cf.Objective != c.want || len(cf.Candidates) != 1 {
			t.Errorf("objective %q: got %q and %d candidates, want %q and 1", c.objective, cf.Objective, len(cf.Candidates), c.want)
		}
	}
	if _, err := ReadCandidates(filepath.Join(dir, "none.yaml")); !errors.As(err, new(*fs.PathError)) {
		t.Errorf("a missing file: %v, want a *fs.PathError", err)
	}
}
