package bench

import (
	"cmp"
	"runtime/debug"
)

// Version, when set at build time with
// -ldflags "-X github.com/servebench/servebench/internal/bench.Version=v1.2.3",
// overrides the module version the build recorded.
var Version = ""

// modulePath is servebench's module, whose version a run records.
const modulePath = "github.com/servebench/servebench"

// ModuleVersion is servebench's version in this build: the -ldflags
// value, else the module version the build recorded ("v1.2.0" from go
// install …@v1.2.0, a pseudo-version from a VCS checkout; servebench's
// entry among the dependencies when another program imports it), else
// "(devel)".
func ModuleVersion() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return moduleVersion(bi)
}

func moduleVersion(bi *debug.BuildInfo) string {
	if bi.Main.Path == modulePath {
		return cmp.Or(bi.Main.Version, "(devel)")
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			return cmp.Or(d.Version, "(devel)")
		}
	}
	return "(devel)"
}

// RecordedVersion is the version run.json records: ModuleVersion, and for
// a "(devel)" build of servebench itself the VCS revision where the build
// recorded one.
func RecordedVersion() string {
	v := ModuleVersion()
	bi, ok := debug.ReadBuildInfo()
	if v != "(devel)" || !ok || bi.Main.Path != modulePath {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += " revision " + s.Value
		}
	}
	return v
}
