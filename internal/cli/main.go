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
	"sort"
	"strings"

	"github.com/servebench/servebench/internal/backend"
)

// Exit codes, documented in README.md.
const (
	ExitOK        = 0 // success; with an objective, the objective holds
	ExitFailure   = 1 // the command failed (bad server, I/O error, ...)
	ExitUsage     = 2 // bad flags or arguments
	ExitObjective = 3 // the run completed but the serving objective does not hold
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

var commands = map[string]*command{}

// register adds a subcommand; each subcommand's file calls it from init.
func register(c *command) { commands[c.name] = c }

// Error is an error with a hint for the user and an exit code.
type Error struct {
	Err  error
	Hint string
	Code int
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// usagef returns a usage error (exit 2) with a hint.
func usagef(hint, format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...), Hint: hint, Code: ExitUsage}
}

// Main runs servebench with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv,
		StderrIsTerminal: isTerminal(stderr)}
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
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(env.Stdout, "servebench", Version)
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "Error: unknown command %q\nTry: servebench help\n", args[0])
		return ExitUsage
	}
	return env.report(c.run(ctx, env, args[1:]))
}

// Version is set at build time with -ldflags "-X ...cli.Version=...".
var Version = "dev"

func (env *Env) report(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Err != nil && e.Err.Error() != "" {
			fmt.Fprintf(env.Stderr, "Error: %s\n", env.redact(e.Err.Error()))
		}
		if e.Hint != "" {
			fmt.Fprintf(env.Stderr, "Try: %s\n", env.redact(e.Hint))
		}
		return e.Code
	}
	fmt.Fprintf(env.Stderr, "Error: %s\n", env.redact(err.Error()))
	return ExitFailure
}

func (env *Env) usage(w io.Writer) {
	fmt.Fprint(w, "servebench measures LLM inference servers against serving objectives.\n\nUsage: servebench <command> [flags]\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, "\nRun 'servebench <command> -h' for a command's flags and examples.\n")
}

// newFlagSet returns a FlagSet that prints usage (with examples) to stderr
// and reports errors instead of exiting.
func newFlagSet(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "%s\n\nFlags:\n", strings.TrimSpace(usage))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &Error{Err: errors.New(""), Hint: "servebench " + fs.Name() + " -h", Code: ExitUsage}
	}
	return nil
}
