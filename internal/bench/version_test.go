package bench

import (
	"runtime/debug"
	"testing"
)

// A build of servebench itself records its own version; a program that
// imports servebench records servebench's entry among its dependencies.
func TestModuleVersionOfMainOrDependency(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"servebench built by go install", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.2.0"}}, "v1.2.0"},
		{"servebench from a checkout without a version", &debug.BuildInfo{Main: debug.Module{Path: modulePath}}, "(devel)"},
		{"imported by another program", &debug.BuildInfo{Main: debug.Module{Path: "example.com/tool", Version: "v9.9.9"},
			Deps: []*debug.Module{{Path: "example.com/other", Version: "v0.1.0"}, {Path: modulePath, Version: "v0.3.1"}}}, "v0.3.1"},
		{"a program without servebench", &debug.BuildInfo{Main: debug.Module{Path: "example.com/tool", Version: "v9.9.9"}}, "(devel)"},
	} {
		if got := moduleVersion(tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
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
