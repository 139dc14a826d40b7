package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

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
