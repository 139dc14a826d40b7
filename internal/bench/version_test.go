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
