package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/store"
)

// historyFlags are run's (and decide's) history options.
type historyFlags struct {
	db     string
	off    bool
	labels labelFlag
	args   []string // the command line, for run.json
}

func (f *runFlags) defineHistory(fs *flag.FlagSet) {
	defineDB(fs, &f.hist.db)
	fs.BoolVar(&f.hist.off, "no-history", false, "do not store the run in the history database (the run directory is written all the same)")
	fs.Var(&f.hist.labels, "label", "a label KEY=VALUE recorded with the run, which servebench history filters on, e.g. --label gpu=L4 (repeatable)")
}

// defineDB defines --db, for every command that reads or writes the
// history.
func defineDB(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "db", "", "history database (default $XDG_DATA_HOME/servebench/history.db, or the OS's per-user data directory)")
}

// labelFlag is repeatable KEY=VALUE.
type labelFlag map[string]string

func (l *labelFlag) String() string { return "" }

func (l *labelFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" || v == "" {
		return errors.New("want KEY=VALUE, such as gpu=L4")
	}
	if *l == nil {
		*l = labelFlag{}
	}
	(*l)[k] = v
	return nil
}

// historyPath is the database --db names, else the default one.
func historyPath(env *Env, db string) (string, error) {
	if db != "" {
		return db, nil
	}
	p, err := store.DefaultPath(runtime.GOOS, env.Getenv)
	if err != nil {
		return "", fmt.Errorf("history: %w; give --db PATH", err)
	}
	return p, nil
}

// remember stores a finished run in the history (store.AddRun). Its
// measurements are in its directory (and on stdout) whatever happens here,
// so a history that cannot be written is a warning that says how to add
// the run later, never a failed run.
func (f *runFlags) remember(ctx context.Context, env *Env, s *metrics.Summary, o *slo.Objective, v *slo.Verdict) {
	if f.hist.off || s == nil || s.Run == nil {
		return
	}
	path, err := historyPath(env, f.hist.db)
	var id int64
	if err == nil {
		id, err = store.AddRun(context.WithoutCancel(ctx), path, s, o, v, f.out)
	}
	if err == nil {
		fmt.Fprintf(env.Stderr, "stored in history as run %d\n", id)
		return
	}
	later := "run it again with --out DIR to keep a copy that servebench history import can add"
	if f.out != "" {
		later = "servebench history import " + f.out + " adds it later"
	}
	fmt.Fprintf(env.Stderr, "warning: the run was not stored in history: %s (%s)\n", env.redact(err.Error()), later)
}

// runArgs is the command line as run.json records it, every credential
// the run knows of redacted.
func (f *runFlags) runArgs(env *Env) []string {
	if f.hist.args == nil {
		return nil
	}
	out := make([]string, len(f.hist.args))
	for i, a := range f.hist.args {
		out[i] = env.redact(a)
	}
	return out
}
