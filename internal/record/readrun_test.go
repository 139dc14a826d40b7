package record

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadRun: a run.json decodes; a missing one is fs.ErrNotExist, for
// callers to whom records suffice; a damaged one is named.
func TestReadRun(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`{"schema":"servebench.run/v1","seed":7,"target":{"model":"m"}}`), 0o644)
	os.WriteFile(bad, []byte(`{"schema":`), 0o644)
	run, err := ReadRun(good)
	if err != nil || run.Seed != 7 || run.Target.Model != "m" {
		t.Errorf("good run.json: %+v, %v", run, err)
	}
	if _, err := ReadRun(filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing run.json: %v, want fs.ErrNotExist", err)
	}
	if _, err := ReadRun(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("damaged run.json: %v, want an error naming %s", err, bad)
	}
}
