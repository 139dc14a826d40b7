package rundir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestRunsAndOf(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "b", "plain"} {
		os.Mkdir(filepath.Join(root, d), 0o755)
	}
	for _, d := range []string{"a", "b"} {
		os.WriteFile(filepath.Join(root, d, RunFile), []byte("{}"), 0o644)
	}
	records := filepath.Join(root, "a", RecordsFile)
	os.WriteFile(records, nil, 0o644)
	a, b, plain := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "plain")
	for _, c := range []struct {
		arg  string
		want []string
	}{
		{a, []string{a}},                 // a run directory is itself
		{root, []string{a, b}},           // a folder of runs is the runs in it
		{plain, []string{plain}},         // a folder of none is itself, for its reader to explain
		{"missing", []string{"missing"}}, // as is what is not there
	} {
		if got := Runs(c.arg); !slices.Equal(got, c.want) {
			t.Errorf("Runs(%s) = %q, want %q", c.arg, got, c.want)
		}
	}
	for _, c := range []struct{ arg, want string }{
		{a, a},       // a directory is itself
		{records, a}, // a records file is in its directory
		{"-", ""},    // standard input has none
		{"", ""},
	} {
		if got := Of(c.arg); got != c.want {
			t.Errorf("Of(%q) = %q, want %q", c.arg, got, c.want)
		}
	}
}
