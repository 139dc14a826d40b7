package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: the -ldflags value wins; without one the build's module
// version is printed.
func TestVersion(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	for _, v := range []string{"v1.2.3", ""} {
		Version = v
		code, stdout, _ := runMain(t, "version")
		want := "servebench " + moduleVersion()
		if v != "" {
			want = "servebench v1.2.3"
		}
		if code != ExitOK || !strings.HasPrefix(stdout, want) || strings.Count(stdout, "\n") != 1 {
			t.Errorf("Version %q: %d %q, want one line starting %q", v, code, stdout, want)
		}
	}
}

// TestVersionLine: the revision, its commit time and the toolchain come
// from the build info, each only where recorded.
func TestVersionLine(t *testing.T) {
	full := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "628ad8a"}, {Key: "vcs.time", Value: "2026-12-03T08:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		// everything a VCS build records
		{"vcs", full, "servebench v1.0.0 · revision 628ad8a (modified) · committed 2026-12-03T08:00:00Z · go1.26.8"},
		// built without VCS stamping (-buildvcs=false)
		{"no vcs", &debug.BuildInfo{GoVersion: "go1.26.8"}, "servebench v1.0.0 · go1.26.8"},
		// no build info at all
		{"none", nil, "servebench v1.0.0"},
	} {
		if got := versionLine("v1.0.0", tc.bi); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
