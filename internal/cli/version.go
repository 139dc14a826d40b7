package cli

import (
	"cmp"
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// Version, when set at build time with -ldflags "-X ...cli.Version=...",
// overrides the module version the build recorded.
var Version = ""

const versionUsage = `
Usage: servebench version

Prints the version servebench was built as: the module version (or the
-ldflags value), then what the build recorded of its source: the VCS
revision (with "modified" when the tree had uncommitted changes), that
revision's commit time, and the Go toolchain. A value the build did not
record is left out.

Examples:
  servebench version
  servebench --version
`

func versionCmd(_ context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "version", versionUsage)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("servebench version", "version takes no argument")
	}
	bi, _ := debug.ReadBuildInfo()
	_, err := fmt.Fprintln(env.Stdout, versionLine(moduleVersion(), bi))
	return err
}

// versionLine is "servebench V", then the build's VCS revision, its
// commit time and the Go version, where the build info records them.
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

// moduleVersion is servebench's version: the -ldflags value, else the
// module version from the build information ("v1.2.0" from go install
// …@v1.2.0, a pseudo-version from a VCS checkout), else "(devel)".
func moduleVersion() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return cmp.Or(bi.Main.Version, "(devel)")
}

// version is the version run.json records: moduleVersion, and for a
// "(devel)" build the VCS revision where the build recorded one.
func version() string {
	v := moduleVersion()
	bi, ok := debug.ReadBuildInfo()
	if v != "(devel)" || !ok {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += " revision " + s.Value
		}
	}
	return v
}
