package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEExamplesParse runs every `servebench run|plan|decide|sim`
// example in README.md with -h appended: each flag the README shows must
// exist, so the README cannot drift from the commands.
func TestREADMEExamplesParse(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range readmeCommands(string(b)) {
		args := shellWords(line)
		if len(args) < 2 || args[0] != "servebench" {
			continue
		}
		switch args[1] {
		case "run", "plan", "decide", "sim":
		default:
			continue
		}
		n++
		code, _, stderr := runMain(t, append(args[1:], "-h")...)
		if code != ExitOK {
			t.Errorf("README example %q: exit %d\n%s", line, code, lastLines(stderr, 3))
		}
	}
	if n < 8 {
		t.Errorf("found only %d README examples; did the README's code blocks change shape?", n)
	}
}

// readmeCommands returns the shell lines of ```sh blocks, continuation
// lines joined, comments, environment prefixes and redirections dropped.
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
		for _, sep := range []string{" > ", " | "} {
			if i := strings.Index(cmd, sep); i >= 0 {
				cmd = cmd[:i]
			}
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
