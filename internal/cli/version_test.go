package cli

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/bench"
)

// TestVersion: the -ldflags value wins; without one the build's module
// version is printed.
func TestVersion(t *testing.T) {
	defer func(v string) { bench.Version = v }(bench.Version)
	for _, v := range []string{"v1.2.3", ""} {
		bench.Version = v
		code, stdout, _ := runMain(t, "version")
		want := "servebench " + bench.ModuleVersion()
		if v != "" {
			want = "servebench v1.2.3"
		}
		if code != ExitOK || !strings.HasPrefix(stdout, want) || strings.Count(stdout, "\n") != 1 {
			t.Errorf("Version %q: %d %q, want one line starting %q", v, code, stdout, want)
		}
	}
}
