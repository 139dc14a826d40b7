package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
)

// TestAddRunDir: a run's directory is stored absolute, as history show
// and report reach it from anywhere; a run without one stores none.
func TestAddRunDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	abs, err := filepath.Abs("runs/a")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ dir, want string }{{"runs/a", abs}, {"", ""}} {
		e := testEntry("2026-12-01T0"+string(rune('7'+i))+":00:00Z", "builtin:sim", "m")
		id, err := AddRun(context.Background(), path, &metrics.Summary{Run: e.Run, Points: e.Points}, nil, nil, c.dir)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := open(t, path).Dir(context.Background(), id); err != nil || got != c.want {
			t.Errorf("AddRun(dir %q): stored %q, %v; want %q", c.dir, got, err, c.want)
		}
	}
}
