// Command enginecheck checks servebench runs against a real engine's own
// timings (see internal/enginecheck for what is checked and why). It is the
// last step of scripts/engine-e2e.sh.
//
//	enginecheck -requests 8 runs/openai runs/native
//
// Exit status: 0 every check passed, 1 a check failed or a run could not be
// read, 2 usage. It never passes by skipping: a run directory without
// records, or no load point it could compare, is a failure.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/servebench/servebench/internal/enginecheck"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	var o enginecheck.Options
	fs := flag.NewFlagSet("enginecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Float64Var(&o.DecodeTolerance, "decode-tolerance", enginecheck.DefaultDecodeTolerance,
		"largest relative difference of client and server median decode speed at concurrency 1")
	fs.IntVar(&o.WantRequests, "requests", 0, "measured requests each load point must have (0: not checked)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: enginecheck [flags] RUN_DIR...\n\n"+
			"Checks each run's %s against the engine's own timings.\n\n"+
			"Example:\n  enginecheck -requests 8 runs/openai runs/native\n\nFlags:\n", enginecheck.RecordsFile)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 || o.DecodeTolerance <= 0 || o.WantRequests < 0 {
		fmt.Fprintln(stderr, "Error: give one or more run directories; -decode-tolerance must be positive, -requests not negative")
		fmt.Fprintln(stderr, "Try: enginecheck runs/native")
		return 2
	}
	res, err := enginecheck.Check(fs.Args(), o)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\nTry: check that servebench run --out wrote that directory\n", err)
		return 1
	}
	if err := enginecheck.Render(stdout, res); err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	if !res.OK() {
		return 1
	}
	return 0
}
