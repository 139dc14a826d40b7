package cli

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/servebench/servebench/internal/bench"
)

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
	_, err := fmt.Fprintln(env.Stdout, versionLine(bench.ModuleVersion(), bi))
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
