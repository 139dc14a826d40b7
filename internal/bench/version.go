package bench

import (
	"cmp"
	"runtime/debug"
	"strings"
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

// VersionLine is what servebench version prints: "servebench V"
// (ModuleVersion), then the build's VCS revision, its commit time and the
// Go version, where the build info records them.
func VersionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return versionLine(ModuleVersion(), bi)
}

// versionLine is VersionLine of version v and build info bi (nil: none).
// Go records no build time; vcs.time is the revision's commit time.
func versionLine(v string, bi *debug.BuildInfo) string {
	parts := []string{"servebench " + v}
	if bi == nil {
		return parts[0]
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	if r := set["vcs.revision"]; r != "" {
		if set["vcs.modified"] == "true" {
			r += " (modified)"
		}
		parts = append(parts, "revision "+r)
	}
	if t := set["vcs.time"]; t != "" {
		parts = append(parts, "committed "+t)
	}
	if bi.GoVersion != "" {
		parts = append(parts, bi.GoVersion)
	}
	return strings.Join(parts, " · ")
}
