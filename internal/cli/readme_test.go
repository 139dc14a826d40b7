package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/gguf"
	"github.com/servebench/servebench/internal/metrics"
)

// TestREADMEExamples runs README.md's shell examples in order, in a
// scratch directory that sees the repository's files, and compares what
// they print with testdata/readme.golden (go test -run README -update
// rewrites it). Examples that need no server run as written: the
// simulator, the planner, the objective presets, files made by an earlier
// line. Examples against a server of the reader's own parse their flags
// (-h) and may only name files that exist or that an earlier line makes.
// Measured figures differ from run to run, so the output of a measuring
// command is compared with its numbers masked.
func TestREADMEExamples(t *testing.T) {
	md, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readmeScratch(t)
	// Files and directories earlier lines make: true when the line ran,
	// false when it needs the reader's server (an example reading it then
	// cannot run here either).
	made := map[string]bool{}
	var golden bytes.Buffer
	ran, parsed := 0, 0
	for _, line := range readmeCommands(string(md)) {
		args, redirect := readmeArgs(line)
		switch {
		case len(args) >= 2 && args[0] == "go" && args[1] == "test":
			continue
		case len(args) >= 3 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/mkgguf":
			readmeMkgguf(t, line, args[3:])
			made[args[len(args)-1]] = true
			continue
		case len(args) >= 3 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/servebench":
			args = append([]string{"servebench"}, args[3:]...)
		}
		if len(args) < 2 || args[0] != "servebench" {
			t.Errorf("README line %q: this test does not know how to run it", line)
			continue
		}
		server := readmeNeedsServer(args[1:])
		for _, in := range readmeInputs(args[1:]) {
			ran, ok := made[in]
			if _, err := os.Stat(in); err != nil && !ok {
				t.Errorf("README line %q names %s, which neither exists nor is made by an earlier line", line, in)
			}
			server = server || (ok && !ran)
		}
		for _, out := range append(readmeOutputs(args[1:]), redirect) {
			if out != "" {
				made[out] = !server
			}
		}
		if server {
			parsed++
			if code, _, stderr := runMain(t, append(args[1:], "-h")...); code != ExitOK {
				t.Errorf("README example %q: exit %d\n%s", line, code, lastLines(stderr, 3))
			}
			continue
		}
		ran++
		restore := readmeSnapshot(t, readmeOutputs(args[1:]))
		code, stdout, stderr := runMain(t, args[1:]...)
		if behind := simBehind(stdout); behind != "" && readmeMeasures(args[1:]) {
			// The host starved the simulator (the run says so, and its
			// figures are not the model's): once more, then give up on a
			// machine this busy rather than compare its figures. The
			// first try's directory and history row go, as if it had not
			// run, so that the line can write them again and later lines
			// list the runs the README's reader gets.
			t.Logf("README example %q again: %s", line, behind)
			restore()
			if code, stdout, stderr = runMain(t, args[1:]...); simBehind(stdout) != "" {
				t.Skipf("README example %q, twice: %s", line, simBehind(stdout))
			}
		}
		if code != ExitOK {
			t.Errorf("README example %q: exit %d\n%s", line, code, lastLines(stderr, 5))
		}
		if redirect != "" {
			if err := os.WriteFile(redirect, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if readmeMeasures(args[1:]) {
			// The history keeps absolute run directories: the scratch
			// directory's path, which differs per machine, reads as ".".
			if wd, err := os.Getwd(); err == nil {
				stdout = strings.ReplaceAll(stdout, wd, ".")
			}
			stdout, stderr = readmeShape(stdout), readmeShape(readmeNoProgress(stderr))
		}
		golden.WriteString("$ " + strings.Join(strings.Fields(line), " ") + "\n" + stdout)
		if stderr != "" {
			golden.WriteString("[stderr]\n" + stderr)
		}
		golden.WriteString("\n")
	}
	if ran < 6 || parsed < 8 {
		t.Errorf("ran %d README examples and parsed %d; did the README's code blocks change shape?", ran, parsed)
	}
	readmeGolden(t, golden.String())
}

// progressLine is a progress line of a run whose stderr is a log: how
// many there are depends on how long its points took.
var progressLine = regexp.MustCompile(`(?m)^\S+ \[point \d+ [^\]]*\] \d+/\S+ done.*\n`)

// readmeNoProgress is stderr without its progress lines.
func readmeNoProgress(stderr string) string { return progressLine.ReplaceAllString(stderr, "") }

// simBehind is the warning line of a run whose simulator fell behind its
// clock, "" when it printed none.
func simBehind(stdout string) string {
	for line := range strings.Lines(stdout) {
		if strings.HasPrefix(line, "WARNING "+metrics.SimBehindPrefix) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// readmeSnapshot keeps the files of the test's history directory as
// they are now and returns what puts them back: files written since are
// removed, and the kept ones rewritten. Of outputs, the paths a line
// writes, those that do not exist now are removed too.
func readmeSnapshot(t *testing.T, outputs []string) (restore func()) {
	t.Helper()
	var fresh []string
	for _, out := range outputs {
		if _, err := os.Stat(out); os.IsNotExist(err) {
			fresh = append(fresh, out)
		}
	}
	dir := filepath.Join(historyGetenv(t)("XDG_DATA_HOME"), "servebench")
	kept := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		kept[e.Name()] = b
	}
	return func() {
		for _, out := range fresh {
			if err := os.RemoveAll(out); err != nil {
				t.Fatal(err)
			}
		}
		now, err := os.ReadDir(dir)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range now {
			if _, ok := kept[e.Name()]; !ok {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
		for name, b := range kept {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// readmeScratch moves the test into a scratch directory holding links to
// the repository's top-level files, so that README paths resolve and
// what the examples write stays out of the repository.
func readmeScratch(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := filepath.Abs(filepath.Join("testdata", "readme.golden"))
	if err != nil {
		t.Fatal(err)
	}
	readmeGoldenPath = golden
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
}

var readmeGoldenPath string

func readmeGolden(t *testing.T, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.WriteFile(readmeGoldenPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(readmeGoldenPath)
	if err != nil {
		t.Fatalf("%v (go test ./internal/cli -run README -update writes it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("README output differs from testdata/readme.golden at line %d:\n got: %s\nwant: %s\n(go test ./internal/cli -run README -update rewrites it; read the diff)", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("README output has %d lines, testdata/readme.golden %d", len(gl), len(wl))
	}
}

// readmeMkgguf writes the GGUF file `go run ./cmd/mkgguf -o FILE` writes.
func readmeMkgguf(t *testing.T, line string, args []string) {
	t.Helper()
	if len(args) != 2 || args[0] != "-o" {
		t.Fatalf("README line %q: this test knows mkgguf with -o FILE only", line)
	}
	m, err := gguf.NewLlama(gguf.DefaultLlama)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(args[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := m.WriteTo(f); err != nil {
		t.Fatal(err)
	}
}

// readmeArgs splits a README command line into words and its stdout
// redirection, if any.
func readmeArgs(line string) (args []string, redirect string) {
	words := shellWords(line)
	for i, w := range words {
		if w == ">" && i+1 < len(words) {
			return words[:i], words[i+1]
		}
	}
	return words, ""
}

// Flags whose value is a file or directory an example reads, or writes.
var (
	readmeInputFlags  = map[string]bool{"--config": true, "--gguf": true, "--compare": true, "--sim-config": true, "--devices": true, "--dataset": true, "--ca-cert": true}
	readmeOutputFlags = map[string]bool{"--out": true}
)

// readmeInputs lists the files an example reads: the values of the input
// flags, an --objective that is a file, and report's run directory.
func readmeInputs(args []string) []string {
	var in []string
	for i := 0; i+1 < len(args); i++ {
		if readmeInputFlags[args[i]] || (args[i] == "--objective" && strings.ContainsAny(args[i+1], "./")) {
			in = append(in, args[i+1])
		}
	}
	if args[0] == "report" && len(args) > 1 && !strings.HasPrefix(args[len(args)-1], "-") {
		in = append(in, args[len(args)-1])
	}
	if args[0] == "compare" && len(args) > 2 {
		in = append(in, args[len(args)-2:]...) // the two runs
	}
	return in
}

func readmeOutputs(args []string) []string {
	var out []string
	for i := 0; i+1 < len(args); i++ {
		if readmeOutputFlags[args[i]] {
			out = append(out, args[i+1])
		}
	}
	return out
}

// readmeNeedsServer: the example measures a server of the reader's own.
func readmeNeedsServer(args []string) bool {
	for _, a := range args {
		if a == "--url" || a == "--target" {
			return true
		}
	}
	return false
}

// readmeMeasures: the example's output holds measured figures.
func readmeMeasures(args []string) bool {
	return args[0] == "run" || args[0] == "report" || args[0] == "history" || slices.Contains(args, "--compare")
}

// readmeNumber matches a figure with its unit, so that "900 µs" and
// "1.2 ms" mask alike.
var readmeNumber = regexp.MustCompile(`\d[\d.,]*(\s?(µs|ms|ns|s|x|×|%)\b|[x×%])?`)

// readmeShape masks a measuring command's figures and spacing, keeps only
// the load label of each table row, and drops its closing notes (warnings,
// explanations): their choice, like a row's verdict words, depends on the
// figures. What remains is the shape of the output, which must not drift.
func readmeShape(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "Warnings:") || strings.HasPrefix(l, "Why") {
			break
		}
		if f := strings.Fields(l); len(f) > 0 && readmeLoad.MatchString(f[0]) {
			out = append(out, f[0]+" …")
			continue
		}
		out = append(out, strings.Join(strings.Fields(readmeNumber.ReplaceAllString(l, "#")), " "))
	}
	return strings.Join(out, "\n")
}

// readmeLoad matches a table row's load label (c=#, r=#/s).
var readmeLoad = regexp.MustCompile(`^[cr]=`)

// readmeCommands returns the shell lines of ```sh blocks, continuation
// lines joined, comments and environment prefixes dropped.
func readmeCommands(md string) []string {
	var out []string
	in := false
	var cur strings.Builder
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			in = strings.HasPrefix(l, "```sh")
			continue
		}
		if !in {
			continue
		}
		l = strings.TrimSpace(l)
		if cont := strings.HasSuffix(l, "\\"); cont {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		cmd := cur.String()
		cur.Reset()
		if i := strings.Index(cmd, " #"); i >= 0 {
			cmd = cmd[:i]
		}
		if strings.HasPrefix(cmd, "#") {
			continue
		}
		cmd = envPrefix.ReplaceAllString(cmd, "")
		if cmd = strings.TrimSpace(cmd); cmd != "" {
			out = append(out, cmd)
		}
	}
	return out
}

var envPrefix = regexp.MustCompile(`^([A-Z_]+=\S*\s+)+`)

// shellWords splits a command line on spaces, honouring single quotes.
func shellWords(s string) []string {
	var out []string
	var w strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, w.String())
				w.Reset()
				any = false
			}
		default:
			w.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, w.String())
	}
	return out
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
