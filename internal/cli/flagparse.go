package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// The flag machinery every command shares: a FlagSet that prints usage
// with examples, parsing that takes flags and arguments in any order, and
// flag errors as one usage line naming the flag.

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
