package cli

import (
	"context"
	"fmt"

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
	_, err := fmt.Fprintln(env.Stdout, bench.VersionLine())
	return err
}
