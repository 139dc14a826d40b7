package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/shard"
	"github.com/servebench/servebench/internal/store"
)

const historyUsage = `
Usage: servebench history [flags]
       servebench history show ID [--json]
       servebench history import DIR... 

Lists the runs stored in the history database, newest first. Every run
and decide stores its runs there (unless --no-history); run directories
stay the source of truth: history import stores (or updates) the runs of
directories written by run --out, and a directory twice is one run.

Examples:
  servebench history
  servebench history --model llama --since 7d
  servebench history --label quantization=q4_K_M --target gpu-a:8000 --json
  servebench history --since 2026-11-01 --until 2026-11-30
  servebench history show 12
  servebench history import runs/a runs/b
  servebench history import runs        (every run directory inside runs)

Dates: 2026-12-01 (a day, in local time; --until takes the whole day in),
2026-12-01T07:00, RFC 3339, or an age: 90m, 24h, 7d, 2w.
`

// defaultHistoryLimit keeps a plain "history" to a screenful; --limit 0
// lists every run.
const defaultHistoryLimit = 50

func historyCmd(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "show":
			return historyShow(ctx, env, args[1:])
		case "import":
			return historyImport(ctx, env, args[1:])
		}
	}
	return historyList(ctx, env, args)
}

// historyFilterFlags are the list's filters as given.
type historyFilterFlags struct {
	target, model, since, until string
	labels                      labelFlag
}

func historyList(ctx context.Context, env *Env, args []string) error {
	var db string
	var ff historyFilterFlags
	fs := newFlagSet(env, "history", historyUsage)
	defineDB(fs, &db)
	fs.StringVar(&ff.target, "target", "", "runs whose target URL contains this (builtin:sim for the simulator)")
	fs.StringVar(&ff.model, "model", "", "runs whose model name or the server's model id contains this")
	fs.Var(&ff.labels, "label", "runs with this label, KEY=VALUE (repeatable: all must match)")
	fs.StringVar(&ff.since, "since", "", "runs started at or after this date, time or age (7d)")
	fs.StringVar(&ff.until, "until", "", "runs started before this date, time or age")
	limit := fs.Int("limit", defaultHistoryLimit, "list the newest N runs (0: all)")
	jsonOut := fs.Bool("json", false, "print the runs as a JSON array")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("servebench history -h", "unexpected argument %q (history show ID, history import DIR…)", fs.Arg(0))
	}
	f, err := ff.filter(time.Now(), *limit)
	if err != nil {
		return err
	}
	h, err := openHistory(ctx, env, db)
	if h == nil {
		return err
	}
	defer h.Close()
	runs, err := h.List(ctx, f)
	if err != nil {
		return &Error{Err: err, Code: ExitFailure}
	}
	if *jsonOut {
		return report.HistoryListJSON(env.Stdout, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(env.Stderr, "no run in %s matches\n", h.Path())
		return nil
	}
	return report.HistoryList(env.Stdout, runs)
}

// filter is the store's filter, the dates read against now.
func (ff historyFilterFlags) filter(now time.Time, limit int) (store.Filter, error) {
	f := store.Filter{Target: ff.target, Model: ff.model, Labels: ff.labels, Limit: limit}
	if limit < 0 {
		return f, usagef("servebench history --limit 20", "--limit wants a whole number, 0 or more, got %d", limit)
	}
	if be, ok := errors.AsType[*store.BoundError](f.Between(ff.since, ff.until, now)); ok {
		return f, usagef("servebench history --since 7d", "--%s wants %s", be.Bound, strings.TrimPrefix(be.Err.Error(), "want "))
	}
	return f, nil
}

// openHistory opens the history for reading. A database that does not
// exist yet is no error: it holds no run, which is said on stderr (nil DB
// and nil error).
func openHistory(ctx context.Context, env *Env, db string) (*store.DB, error) {
	path, err := historyPath(env, db)
	if err != nil {
		return nil, usagef("servebench history --db runs/history.db", "%v", err)
	}
	h, err := store.Open(ctx, path, store.Options{MustExist: true, ReadOnly: true})
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(env.Stderr, "no run stored yet: %s does not exist (servebench run stores each run; history import DIR… adds run directories)\n", path)
		return nil, nil
	}
	if err != nil {
		return nil, &Error{Err: err, Code: ExitFailure}
	}
	return h, nil
}

func historyShow(ctx context.Context, env *Env, args []string) error {
	var db string
	fs := newFlagSet(env, "history show", historyUsage)
	defineDB(fs, &db)
	jsonOut := fs.Bool("json", false, "print the run as JSON, every point's whole summary and verdict included")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("servebench history show 12 (servebench history lists the ids)", "history show wants one run id")
	}
	id, err := store.ParseID(fs.Arg(0))
	if err != nil {
		return usagef("servebench history show 12 (servebench history lists the ids)", "history show: %v", err)
	}
	h, err := openHistory(ctx, env, db)
	if h == nil {
		if err == nil {
			err = &Error{Err: fmt.Errorf("no run %d: the history is empty", id), Code: ExitFailure}
		}
		return err
	}
	defer h.Close()
	d, err := h.Get(ctx, id)
	if err != nil {
		return &Error{Err: err, Code: ExitFailure}
	}
	if *jsonOut {
		return report.HistoryRunJSON(env.Stdout, d)
	}
	return report.HistoryRun(env.Stdout, d)
}

// resolveRun resolves a command's run argument: a directory as it is, else a
// history id (12 or #12) looked up in the history database db ("" for the
// default one). For commands that read recorded runs, such as compare.
func resolveRun(ctx context.Context, env *Env, db, arg string) (string, error) {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return arg, nil
	}
	id, err := store.ParseID(arg)
	if err != nil {
		return "", &Error{Err: fmt.Errorf("%s is neither a run directory nor a history id", arg), Hint: "servebench history lists the stored runs and their ids", Code: ExitUsage}
	}
	path, err := historyPath(env, db)
	if err != nil {
		return "", &Error{Err: err, Code: ExitFailure}
	}
	h, err := store.Open(ctx, path, store.Options{MustExist: true, ReadOnly: true})
	if err != nil {
		return "", &Error{Err: err, Hint: "servebench history lists the stored runs and their ids", Code: ExitFailure}
	}
	defer h.Close()
	dir, err := h.Dir(ctx, id)
	if err != nil {
		return "", &Error{Err: err, Code: ExitFailure}
	}
	if dir == "" {
		return "", &Error{Err: fmt.Errorf("run %d was made without --out: its records were not kept, only its summary (servebench history show %d)", id, id), Code: ExitFailure}
	}
	return filepath.Clean(dir), nil
}

func historyImport(ctx context.Context, env *Env, args []string) error {
	var db string
	fs := newFlagSet(env, "history import", historyUsage)
	defineDB(fs, &db)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("servebench history import runs/a runs/b", "history import wants run directories (written by servebench run --out)")
	}
	path, err := historyPath(env, db)
	if err != nil {
		return usagef("servebench history import --db runs/history.db runs/a", "%v", err)
	}
	h, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return &Error{Err: err, Code: ExitFailure}
	}
	defer h.Close()
	failed, total, err := h.ImportAll(ctx, fs.Args(), rundir.Options{Warn: env.warn, RunWarnings: shard.Warnings}, func(dir string, id int64, replaced bool, err error) {
		switch {
		case err != nil:
			fmt.Fprintf(env.Stderr, "Error: %s: %s\n", dir, env.redact(err.Error()))
		case replaced:
			fmt.Fprintf(env.Stdout, "run %d: %s (already in history, updated)\n", id, dir)
		default:
			fmt.Fprintf(env.Stdout, "run %d: %s\n", id, dir)
		}
	})
	if err != nil {
		return &Error{Err: err, Hint: "the run directories are not at fault: repair or move the database aside, then import them again", Code: ExitFailure}
	}
	if failed > 0 {
		return &Error{Err: fmt.Errorf("%d of %d run directories were not imported (the others were)", failed, total),
			Hint: "a run directory holds run.json, records.jsonl and summary.json, as servebench run --out writes them", Code: ExitFailure}
	}
	return nil
}
