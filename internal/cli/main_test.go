package cli

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
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

// TestReportWithoutArgumentOnATerminal: with nothing piped in, report
// without an argument is a usage error instead of a silent wait.
func TestReportWithoutArgumentOnATerminal(t *testing.T) {
	var out, errb strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, StdinIsTerminal: true}
	code := env.Main(t.Context(), []string{"report"})
	if code != ExitUsage || !strings.Contains(errb.String(), "report needs a run directory") {
		t.Errorf("report on a terminal: exit %d, %q", code, errb.String())
	}
	// Piped in, an empty input is read and found empty.
	code, _, stderr := runMain(t, "report")
	if code != ExitFailure || !strings.Contains(stderr, "standard input holds no records") {
		t.Errorf("report from a pipe: exit %d, %q", code, stderr)
	}
}

// TestVersion: the -ldflags value wins; without one the build's module
// version is printed.
func TestVersion(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	for _, v := range []string{"v1.2.3", ""} {
		Version = v
		code, stdout, _ := runMain(t, "version")
		want := "servebench " + moduleVersion()
		if v != "" {
			want = "servebench v1.2.3"
		}
		if code != ExitOK || !strings.HasPrefix(stdout, want) || strings.Count(stdout, "\n") != 1 {
			t.Errorf("Version %q: %d %q, want one line starting %q", v, code, stdout, want)
		}
	}
}

// TestVersionLine: the revision, its commit time and the toolchain come
// from the build info, each only where recorded.
func TestVersionLine(t *testing.T) {
	full := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "628ad8a"}, {Key: "vcs.time", Value: "2026-12-03T08:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		// everything a VCS build records
		{"vcs", full, "servebench v1.0.0 · revision 628ad8a (modified) · committed 2026-12-03T08:00:00Z · go1.26.8"},
		// built without VCS stamping (-buildvcs=false)
		{"no vcs", &debug.BuildInfo{GoVersion: "go1.26.8"}, "servebench v1.0.0 · go1.26.8"},
		// no build info at all
		{"none", nil, "servebench v1.0.0"},
	} {
		if got := versionLine("v1.0.0", tc.bi); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestHelpOfEveryCommand: every command prints its usage for -h (exit
// 0), with no empty Flags: heading, and sim's names no other command's
// flag; calibrate's lists its flags, and plan's names calibrate.
func TestHelpOfEveryCommand(t *testing.T) {
	for _, c := range commands {
		code, stdout, stderr := runMain(t, c.name, "-h")
		help := stdout + stderr
		if code != ExitOK || !strings.Contains(help, "Usage: servebench "+c.name) {
			t.Errorf("%s -h: exit %d, %q", c.name, code, lastLines(help, 3))
		}
		if strings.HasSuffix(strings.TrimSpace(help), "Flags:") {
			t.Errorf("%s -h ends with an empty Flags: heading", c.name)
		}
	}
	_, _, simHelp := runMain(t, "sim", "-h")
	if strings.Contains(simHelp, "--against") {
		t.Errorf("sim -h names --against, a flag of calibrate")
	}
	_, _, calibHelp := runMain(t, "calibrate", "-h")
	for _, flag := range []string{"Usage: servebench calibrate RUN_DIR", "-against directory", "-fit-concurrency", "-bootstrap"} {
		if !strings.Contains(calibHelp, flag) {
			t.Errorf("calibrate -h does not list %s", flag)
		}
	}
	_, _, planHelp := runMain(t, "plan", "-h")
	for _, flag := range []string{"servebench calibrate RUN_DIR"} {
		if !strings.Contains(planHelp, flag) {
			t.Errorf("plan -h does not name %s", flag)
		}
	}
	// plan's examples name models the repository holds (paths from its root)
	_, examples, _ := strings.Cut(planHelp, "Examples:")
	examples, _, _ = strings.Cut(examples, "Flags:")
	for _, m := range regexp.MustCompile(`--config (\S+)`).FindAllStringSubmatch(examples, -1) {
		if _, err := os.Stat(filepath.Join("../..", m[1])); err != nil {
			t.Errorf("plan -h's example names %s, which is not in the repository", m[1])
		}
	}
}
