package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/live"
	"github.com/servebench/servebench/internal/rundir"
)

// The live view (run --live, decide --live): a page that shows the run
// while it goes (internal/live; docs/OUTPUT.md, "The live view").

var _ bench.Watcher = (*live.Server)(nil)

// liveFlags are --live [ADDR] and --live-linger.
type liveFlags struct {
	addr   liveAddr
	linger time.Duration
	srv    *live.Server // while the command runs
}

// liveAddr is --live: a flag that may stand alone (a free loopback port)
// or take an address, as --live=ADDR or --live ADDR (liveArgs).
type liveAddr struct {
	on   bool
	addr string
}

func (a *liveAddr) String() string {
	if a == nil || !a.on {
		return ""
	}
	return a.addr
}

func (a *liveAddr) Set(v string) error {
	a.on = true
	if v == "true" {
		v = ""
	}
	if v == "false" {
		a.on, v = false, ""
	}
	a.addr = v
	return nil
}

// IsBoolFlag lets --live stand alone.
func (a *liveAddr) IsBoolFlag() bool { return true }

func (f *runFlags) defineLive(fs *flag.FlagSet) {
	fs.Var(&f.live.addr, "live", "serve a live view of the run at `ADDR` (host:port); alone, a free port on 127.0.0.1. An address that is not loopback needs the token printed with the URL")
	fs.DurationVar(&f.live.linger, "live-linger", 0, "keep the live view up this long after the run ends (e.g. 5m; Ctrl-C ends it sooner)")
}

// liveArgs rewrites "--live ADDR" as "--live=ADDR", for the flag package
// takes a value of a flag that may stand alone only after "=". ADDR is
// the next argument when it looks like host:port.
func liveArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "--live" || a == "-live") && i+1 < len(args) && looksLikeAddr(args[i+1]) {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

func looksLikeAddr(s string) bool {
	return !strings.HasPrefix(s, "-") && strings.Contains(s, ":") && !strings.Contains(s, "/")
}

// start listens for the live view, when asked, and prints its URL before
// anything else is measured; the run is then fed to it (m.Watch).
func (l *liveFlags) start(env *Env) error {
	if !l.addr.on {
		if l.linger != 0 {
			return usagef("servebench run --live --live-linger 5m", "--live-linger keeps the live view up: give --live too")
		}
		return nil
	}
	if l.linger < 0 {
		return usagef("servebench run --live --live-linger 5m", "--live-linger %v: must not be negative", l.linger)
	}
	srv, err := live.Listen(live.Options{Addr: l.addr.addr})
	if err != nil {
		return usagef("servebench run --live 127.0.0.1:8089  or  --live alone (a free port)", "--live: %v", err)
	}
	l.srv = srv
	fmt.Fprintf(env.Stderr, "live view: %s\n", srv.URL())
	return nil
}

// watch is what the run is fed to: the live view, or nil.
func (l *liveFlags) watch() bench.Watcher {
	if l.srv == nil {
		return nil
	}
	return l.srv
}

// close ends the live view once the command is done: its page says so,
// links the report written in out, and the server closes after
// --live-linger (or Ctrl-C).
func (l *liveFlags) close(ctx context.Context, env *Env, out string) {
	if l.srv == nil {
		return
	}
	report := ""
	if out != "" {
		report = filepath.Join(out, rundir.ReportFile)
	}
	if l.linger > 0 {
		fmt.Fprintf(env.Stderr, "live view: up for %v more (Ctrl-C ends it)\n", l.linger)
	}
	if err := l.srv.Close(ctx, report, l.linger); err != nil {
		fmt.Fprintf(env.Stderr, "warning: closing the live view: %v\n", err)
	}
	l.srv = nil
}
