package cli

import (
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseFlagsAnyOrder: flags may follow positional arguments, and "--"
// makes everything after it positional.
func TestParseFlagsAnyOrder(t *testing.T) {
	tests := []struct {
		args []string
		json bool
		n    int
		pos  []string
	}{
		{[]string{"runs/a", "--json"}, true, 0, []string{"runs/a"}},
		{[]string{"--json", "runs/a"}, true, 0, []string{"runs/a"}},
		{[]string{"a", "--n", "3", "b", "--json"}, true, 3, []string{"a", "b"}},
		{[]string{"a", "--", "--json", "-"}, false, 0, []string{"a", "--json", "-"}},
		{[]string{"-"}, false, 0, []string{"-"}},
		{nil, false, 0, []string{}},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("report", flag.ContinueOnError)
		jsonOut := fs.Bool("json", false, "")
		n := fs.Int("n", 0, "")
		if err := parseFlags(fs, tt.args); err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if got := fs.Args(); *jsonOut != tt.json || *n != tt.n || !reflect.DeepEqual(got, tt.pos) {
			t.Errorf("%q: json %v, n %d, args %q; want %v, %d, %q", tt.args, *jsonOut, *n, got, tt.json, tt.n, tt.pos)
		}
	}
}

// TestFlagErrorsAreOneLine: a bad flag gives one line naming the flag and
// the form it wants, never the usage text.
func TestFlagErrorsAreOneLine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--duration", "1x"}, `Error: --duration wants a duration such as 60s, got "1x"`},
		{[]string{"run", "--duration"}, `Error: --duration wants a duration such as 60s`},
		{[]string{"run", "--requests", "many"}, `Error: --requests wants a whole number such as 8, got "many"`},
		{[]string{"run", "--seed", "-1"}, `Error: --seed wants a whole number, 0 or more, such as 8, got "-1"`},
		{[]string{"run", "--burstiness", "x"}, `Error: --burstiness wants a number such as 1.5, got "x"`},
		{[]string{"run", "--json=maybe"}, `Error: --json wants true or false (or no value), got "maybe"`},
		{[]string{"run", "--warmup", "soon"}, `Error: --warmup wants a request count (5) or a duration (10s), got "soon"`},
		{[]string{"run", "--header", "x"}, `Error: --header wants "Name: value", got "x"`},
		// A reason that quotes the value is not preceded by it again.
		{[]string{"report", "--slo", "fast"}, `Error: --slo: SLO "fast": no comparison`},
		{[]string{"run", "--slo", "ttft p95 <= banana"}, `Error: --slo: SLO "ttft p95 <= banana": value "banana" is not a number, e.g. 'ttft p95 <= 1.5s'`},
		{[]string{"plan", "--ttft", "soon"}, `Error: --ttft wants a duration such as 60s, got "soon"`},
		{[]string{"report", "runs/a", "--format"}, `Error: --format wants a value: output format: text, markdown, csv, json`},
		{[]string{"decide", "--target", "foo"}, `Error: --target wants key=value pairs, e.g. name=a,url=http://127.0.0.1:8000,gpus=1, got "foo"`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runMain(t, tt.args...)
		if code != ExitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line starting %q", tt.args, code, stderr, tt.want)
		}
	}
	// -h still prints the usage, and is no error.
	code, _, stderr := runMain(t, "run", "-h")
	if code != ExitOK || !strings.Contains(stderr, "Examples:") || !strings.Contains(stderr, "-duration") {
		t.Errorf("run -h: exit %d, %d bytes of usage", code, len(stderr))
	}
}

// TestUnknownFlagTry: an unknown flag is a usage error with a Try line,
// which names the flag meant when the name is a typo of one, or the
// command a flag moved to.
func TestUnknownFlagTry(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--concurency", "2"}, "Error: unknown flag --concurency\nTry: --concurrency (servebench run -h lists its flags)\n"},
		{[]string{"plan", "--calibrate", "runs/a"}, "Error: unknown flag --calibrate\nTry: servebench calibrate RUN_DIR (calibration is a command of its own)\n"},
		{[]string{"report", "runs/a", "-jsn"}, "Error: unknown flag --jsn\nTry: --json (servebench report -h lists its flags)\n"},
		{[]string{"run", "--prompt-token", "8"}, "Error: unknown flag --prompt-token\nTry: --prompt-tokens (servebench run -h lists its flags)\n"},
		// Nothing near: the flags' list.
		{[]string{"run", "--bogus"}, "Error: unknown flag --bogus\nTry: servebench run -h lists its flags\n"},
		{[]string{"compare", "--x"}, "Error: unknown flag --x\nTry: servebench compare -h lists its flags\n"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runMain(t, tt.args...)
		if code != ExitUsage || stdout != "" || stderr != tt.want {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestFlagForm: the expected form follows the flag's type.
func TestFlagForm(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Duration("d", time.Second, "")
	fs.Func("f", "", func(string) error { return nil })
	tests := []struct {
		name, reason, want string
	}{
		{"d", "parse error", "a duration such as 60s"},
		{"f", "want a thing", "a thing"},
		{"f", "bad thing", ""},
		{"f", "", "a value (see -h)"},
	}
	for _, tt := range tests {
		if got := flagForm(fs.Lookup(tt.name), tt.reason); got != tt.want {
			t.Errorf("flagForm(%s, %q) = %q, want %q", tt.name, tt.reason, got, tt.want)
		}
	}
}
