package cli

import (
	"context"
	"flag"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/sweep"
)

// sweepRenderers are the formats a sweep is reported in: the tables sweep
// printed, sweep.json, or its page. CSV has no one table to hold it.
var sweepRenderers = map[string]func(io.Writer, *sweep.File) error{
	"text": report.Sweep, "markdown": report.SweepMarkdown, "json": report.SweepJSON, "html": report.SweepPage,
}

// reportSweep reports a sweep from its directory, dir (one of fs's
// arguments), as sweep reported it when it ended, and exits as the sweep
// did (sweepExit). With an objective (o), each configuration's run is
// judged again and the recommendation made again, as if the sweep had
// been run with it; sweep.json is left as it is. Slicing or merging is
// for one configuration's run, DIR/NAME.
func reportSweep(ctx context.Context, env *Env, fs *flag.FlagSet, dir, format string, o *slo.Objective, named, strict bool) error {
	if fs.NArg() > 1 {
		return usagef("servebench report "+dir+"  or  servebench report --format html "+filepath.Join(dir, "NAME")+" "+filepath.Join(dir, "NAME2"),
			"%s is a sweep's directory: report it alone, or overlay its configurations' runs", dir)
	}
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains([]string{"format", "json", "objective", "slo", "target-load", "strict"}, f.Name) {
			set = append(set, "--"+f.Name)
		}
	})
	if len(set) > 0 {
		return usagef("servebench report [flags] "+filepath.Join(dir, "NAME")+"  (one configuration's run)",
			"%s is a sweep's directory: %s %s for one configuration's run", dir, strings.Join(set, ", "), isAre(len(set)))
	}
	render, ok := sweepRenderers[format]
	if !ok {
		return usagef("servebench report --format markdown "+dir+"  or  --json", "a sweep has several tables: --format %s is not one of %s", format, strings.Join(slices.Sorted(maps.Keys(sweepRenderers)), ", "))
	}
	f, err := sweep.Read(dir)
	if err != nil {
		return &Error{Err: err, Hint: "servebench sweep ... --out DIR writes DIR/" + sweep.FileName, Code: ExitFailure}
	}
	if o != nil && f.StartupOnly {
		return usagef("servebench report "+dir, "%s is a --startup-only sweep: it ran no load, so there is nothing to judge", dir)
	}
	if o != nil {
		if f, err = f.JudgeRuns(o, named, env.readOptions(strict, sliceFlag{})); err != nil {
			e := hinted(err)
			e.Hint = "servebench report " + dir + "  (the answer as the sweep recorded it, which reads no run)"
			return e
		}
	}
	if err := render(env.Stdout, f); err != nil {
		return err
	}
	return sweepExit(ctx, f)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
