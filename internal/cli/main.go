// Package cli owns servebench's command line: one file per subcommand with
// its flags and usage text, and the single place where errors become
// "Error: … / Try: …" messages and exit codes.
package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"

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

// usagef returns a usage error (exit 2) with a hint.
func usagef(hint, format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...), Hint: hint, Code: ExitUsage}
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

// Version, when set at build time with -ldflags "-X ...cli.Version=...",
// overrides the module version the build recorded.
var Version = ""

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
	_, err := fmt.Fprintln(env.Stdout, versionLine(moduleVersion(), bi))
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

// moduleVersion is servebench's version: the -ldflags value, else the
// module version from the build information ("v1.2.0" from go install
// …@v1.2.0, a pseudo-version from a VCS checkout), else "(devel)".
func moduleVersion() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return cmp.Or(bi.Main.Version, "(devel)")
}

// version is the version run.json records: moduleVersion, and for a
// "(devel)" build the VCS revision where the build recorded one.
func version() string {
	v := moduleVersion()
	bi, ok := debug.ReadBuildInfo()
	if v != "(devel)" || !ok {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += " revision " + s.Value
		}
	}
	return v
}

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
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'servebench <command> -h' for a command's flags and examples.\n")
}

// newFlagSet returns a FlagSet that prints usage (with examples) to stderr
// and reports errors instead of exiting.
func newFlagSet(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "%s\n", strings.TrimSpace(usage))
		printFlags(env.Stderr, fs, "Flags:")
	}
	return fs
}

// isHelpArg reports whether a is a request for help.
func isHelpArg(a string) bool {
	return a == "-h" || a == "--help" || a == "-help" || a == "help"
}

// printFlags prints fs's flags under heading, after a blank line; nothing
// when fs has none.
func printFlags(w io.Writer, fs *flag.FlagSet, heading string) {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", heading)
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// parseFlags parses args, flags and positional arguments in any order
// ("report runs/a --json"; after "--" everything is positional); fs.Args
// then holds the positional ones. A flag error is one usage line (exit 2)
// naming the flag and what it wants, not the whole usage, which only -h
// prints.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var pos []string
	err := fs.Parse(args)
	for err == nil && fs.NArg() > 0 {
		rest := fs.Args()
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...) // the flag package consumed a "--"
			break
		}
		pos = append(pos, rest[0])
		err = fs.Parse(rest[1:])
	}
	fs.SetOutput(out)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return err
	}
	if err != nil {
		return flagError(fs, err)
	}
	// Parsing "--" alone sets the positional arguments and no flag.
	return fs.Parse(append([]string{"--"}, pos...))
}

// Messages of the flag package, parsed to name the flag at fault.
var (
	flagInvalid   = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([^:]+): (.*)$`)
	flagUndefined = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	flagNoValue   = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// flagError rewrites a flag package error as a usage error: one line
// naming the flag, the value given and the form it wants; an unknown flag
// also gets a Try line with the flag it most likely meant.
func flagError(fs *flag.FlagSet, err error) error {
	e := &Error{Err: flagMessage(fs, err), Code: ExitUsage}
	if m := flagUndefined.FindStringSubmatch(err.Error()); m != nil {
		e.Hint = fmt.Sprintf("servebench %s -h lists its flags", fs.Name())
		if moved, ok := movedFlags[fs.Name()+" --"+m[1]]; ok {
			e.Hint = moved
		} else if near := nearestFlag(fs, m[1]); near != "" {
			e.Hint = fmt.Sprintf("--%s (%s)", near, e.Hint)
		}
	}
	return e
}

// movedFlags are flags a command had and another now has: the Try line
// names where the flag went, for a user with an old script.
var movedFlags = map[string]string{
	"plan --calibrate": "servebench calibrate RUN_DIR (calibration is a command of its own)",
}

// flagMessage is flagError's message.
func flagMessage(fs *flag.FlagSet, err error) error {
	help := fmt.Sprintf("servebench %s -h lists its flags", fs.Name())
	msg := err.Error()
	if m := flagUndefined.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("unknown flag --%s", m[1])
	}
	if m := flagNoValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("--%s wants %s", m[1], flagForm(fs.Lookup(m[1]), ""))
	}
	if m := flagInvalid.FindStringSubmatch(msg); m != nil {
		if r, ok := flagValue(fs, m[2]).(interface{ redact(string) string }); ok {
			m[1] = r.redact(m[1]) // a credential
		}
		form := flagForm(fs.Lookup(m[2]), m[3])
		if form == "" && strings.Contains(m[3], `"`+m[1]+`"`) { // a reason that quotes the value itself
			return fmt.Errorf("--%s: %s", m[2], m[3])
		}
		if form == "" { // a flag of its own type: its reason says it all
			return fmt.Errorf("--%s %q: %s", m[2], m[1], m[3])
		}
		return fmt.Errorf("--%s wants %s, got %q", m[2], form, m[1])
	}
	return fmt.Errorf("%v (%s)", err, help)
}

// flagValue is the Value of the flag named name (nil when there is none).
func flagValue(fs *flag.FlagSet, name string) flag.Value {
	if f := fs.Lookup(name); f != nil {
		return f.Value
	}
	return nil
}

// nearestFlag is the flag of fs whose name is nearest to name, a typo of
// it (at most a third of its letters wrong, and no more than 3), or "".
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestDist := "", min(3, len(name)/3)+1
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// flagForm says what kind of value a flag takes. For flags of their own
// type the reason their Set gave says it best: a reason "want X" gives X,
// any other gives "".
func flagForm(f *flag.Flag, reason string) string {
	var v any
	if f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			v = g.Get()
		}
	}
	switch v.(type) {
	case time.Duration:
		return "a duration such as 60s"
	case int, int64:
		return "a whole number such as 8"
	case uint, uint64:
		return "a whole number, 0 or more, such as 8"
	case float64:
		return "a number such as 1.5"
	case bool:
		return "true or false (or no value)"
	case string:
		_, usage := flag.UnquoteUsage(f)
		return "a value: " + usage
	}
	if form, ok := strings.CutPrefix(reason, "want "); ok {
		return form
	}
	if reason == "" {
		return "a value (see -h)"
	}
	return ""
}
