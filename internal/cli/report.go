package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/report"
)

const reportUsage = `
Usage: servebench report [flags] [DIR | FILE | -]

Recomputes every summary from records alone: a run directory (its
records.jsonl, with run.json for context when present), a records file, or
standard input ("-" or no argument).

Examples:
  servebench report runs/a
  servebench report --json runs/a/records.jsonl
  cat runs/a/records.jsonl | servebench report --format markdown
`

func init() {
	register(&command{name: "report", summary: "recompute and print a summary from recorded requests", run: reportCmd})
}

func reportCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report", reportUsage)
	format := fs.String("format", "text", "output format: text, markdown, csv, json")
	jsonOut := fs.Bool("json", false, "print the summary JSON (same as --format json)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("servebench report runs/a", "report takes one run directory or records file, got %d", fs.NArg())
	}
	render, ok := report.Formats[*format]
	if !ok {
		return usagef("servebench report --format text", "--format %q: want text, markdown, csv or json", *format)
	}
	if *jsonOut {
		render = report.JSON
	}
	s, err := loadSummary(env.Stdin, fs.Arg(0))
	if err != nil {
		return err
	}
	return render(env.Stdout, s)
}

// loadSummary reads records from a run directory, a file or stdin and
// summarises them; run.json is used for context when it sits beside them.
func loadSummary(stdin io.Reader, arg string) (*metrics.Summary, error) {
	var r io.Reader = stdin
	var run *record.Run
	name := "standard input"
	if arg != "" && arg != "-" {
		path := arg
		if st, err := os.Stat(arg); err == nil && st.IsDir() {
			path = filepath.Join(arg, bench.RecordsFile)
		} else if err != nil {
			return nil, &Error{Err: err, Hint: "servebench report runs/a (a directory written by servebench run --out)", Code: ExitFailure}
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, &Error{Err: err, Hint: "servebench report runs/a (a directory written by servebench run --out)", Code: ExitFailure}
		}
		defer f.Close()
		r, name = f, path
		if run, err = readRun(filepath.Join(filepath.Dir(path), bench.RunFile)); err != nil {
			return nil, err
		}
	}
	var agg metrics.Aggregator
	rd := record.NewReader(r)
	n := 0
	for rd.Next() {
		agg.Add(rd.Record())
		n++
	}
	if err := rd.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if n == 0 {
		return nil, &Error{Err: fmt.Errorf("%s holds no records", name), Hint: "servebench run --out DIR writes DIR/records.jsonl", Code: ExitFailure}
	}
	return metrics.Summarize(run, &agg), nil
}

// readRun reads run.json; a missing file is no error (records suffice).
func readRun(path string) (*record.Run, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var run record.Run
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &run, nil
}
