// Package cli owns servebench's command line: one file per subcommand with
// its flags and usage text, and the single place where errors become
// "Error: … / Try: …" messages and exit codes.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/backend"
)

// Exit codes, documented in README.md.
const (
	ExitOK        = 0 // success; with an objective, the objective holds
	ExitFailure   = 1 // the command failed (bad server, I/O error, ...)
	ExitUsage     = 2 // bad flags or arguments
	ExitObjective = 3 // the run completed but the serving objective does not hold
	// ExitRegression is compare's: a --fail-on-regression gate failed. It
	// shares 3 with ExitObjective: the command worked, and what it judged
	// does not hold.
	ExitRegression = 3
	// ExitInconclusive: the run completed, but the evidence a conclusion
	// rests on is invalid (the simulator fell behind its clock, the client
	// saturated, ...; docs/METRICS.md, Validity): neither met nor not met.
	// A conclusion on valid evidence takes precedence: 1 > 3 > 4.
	ExitInconclusive = 4
)

// Env is what a command may touch of the outside world, so tests can supply
// their own.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment (API keys, OLLAMA_HOST-style settings).
	Getenv func(string) string
	// StderrIsTerminal turns on live progress output.
	StderrIsTerminal bool
	// StdinIsTerminal: nobody is piping records in.
	StdinIsTerminal bool
	// redactors know the credentials of the servers a command reaches;
	// every error printed passes through them.
	redactors []*backend.Redactor
}

// redact removes every known credential from s.
func (env *Env) redact(s string) string {
	for _, r := range env.redactors {
		s = r.String(s)
	}
	return s
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

// commands are servebench's subcommands, dispatched from this table (each
// one's flags and usage live in its own file), in the order help lists
// them.
var commands = []command{
	{"calibrate", "fit a performance model to a measured run and predict loads that were not run", calibrateCmd},
	{"compare", "compare two recorded runs: changes with confidence intervals, regression gates", compareCmd},
	{"decide", "run one objective against several servers and recommend one", decideCmd},
	{"history", "list the runs stored in the history database, show one, import run directories", historyCmd},
	{"kube", "print a Kubernetes Indexed Job that runs servebench as many workers", kubeCmd},
	{"objective", "list the preset serving objectives, or print one as YAML", objectiveCmd},
	{"plan", "memory budget, GPU fit and roofline estimates for a model (and predicted vs measured)", planCmd},
	{"report", "recompute and print a summary from recorded requests", reportCmd},
	{"run", "measure a server (or the built-in simulator) under load", runCmd},
	{"sim", "run the simulated LLM server (OpenAI, vLLM and Ollama APIs)", runSim},
	{"sweep", "start a server for each configuration, measure it, stop it, and choose", sweepCmd},
	{"version", "print the version servebench was built as", versionCmd},
}

// Error is an error with a hint for the user and an exit code.
type Error struct {
	Err  error
	Hint string
	Code int
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// A hinter is an error whose owner knows what the user should try: its
// Hint is the Try line. A usager says with Usage whether what was asked
// is at fault (exit 2) rather than what happened (exit 1).
type (
	hinter interface {
		error
		Hint() string
	}
	usager interface {
		error
		Usage() bool
	}
)

// hinted is err as the user is told it: an *Error as it is; else with
// the Try line and exit code its owner gives it (hinter, usager); else a
// failure (exit 1) without a hint.
func hinted(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	e := &Error{Err: err, Code: ExitFailure}
	if h, ok := errors.AsType[hinter](err); ok {
		e.Hint = h.Hint()
	}
	if u, ok := errors.AsType[usager](err); ok && u.Usage() {
		e.Code = ExitUsage
	}
	return e
}

// usagef returns a usage error (exit 2) with a hint.
func usagef(hint, format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...), Hint: hint, Code: ExitUsage}
}

// hintAs tells an error of run's flags, met in another command that takes
// them, with that command's Try line: "servebench run --rate 0.5,1,2"
// becomes "servebench sweep --serve CMD --out DIR --rate 0.5,1,2" for
// command "sweep" and its required flags, and "servebench run -h" becomes
// "servebench sweep -h".
func hintAs(err error, command, required string) error {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	e := hinted(err) // as report tells it, a lower package's hint included
	rest, ok := strings.CutPrefix(e.Hint, "servebench run ")
	switch {
	case !ok:
	case strings.HasPrefix(rest, "-h"):
		e.Hint = "servebench " + command + " " + rest
	default:
		e.Hint = "servebench " + command + " " + required + " " + rest
	}
	return e
}

// Main runs servebench with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv,
		StderrIsTerminal: isTerminal(stderr), StdinIsTerminal: isTerminal(stdin)}
	return env.Main(ctx, args)
}

// Main runs a command line in this environment.
func (env *Env) Main(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		env.usage(env.Stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	name := args[0]
	if name == "--version" {
		name = "version"
	}
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		fmt.Fprintf(env.Stderr, "Error: unknown command %q\nTry: servebench help\n", args[0])
		return ExitUsage
	}
	return env.report(commands[i].run(ctx, env, args[1:]))
}

func (env *Env) report(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	e := hinted(err)
	if e.Err != nil && e.Err.Error() != "" {
		fmt.Fprintf(env.Stderr, "Error: %s\n", env.redact(e.Err.Error()))
	}
	if e.Hint != "" {
		fmt.Fprintf(env.Stderr, "Try: %s\n", env.redact(e.Hint))
	}
	return e.Code
}

func (env *Env) usage(w io.Writer) {
	fmt.Fprint(w, "servebench measures LLM inference servers against serving objectives.\n\nUsage: servebench <command> [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'servebench <command> -h' for a command's flags and examples.\n")
}
