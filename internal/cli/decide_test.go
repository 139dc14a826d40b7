package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDecideRefusals: what decide cannot take is refused before any
// load, with the message and hint the user acts on: candidates missing,
// named twice or without an objective are usage errors; a server
// candidate that fails its preflight stops the decision, named, with the
// preflight's hint.
func TestDecideRefusals(t *testing.T) {
	dir := t.TempDir()
	cands := filepath.Join(dir, "candidates.yaml")
	if err := os.WriteFile(cands, []byte("candidates:\n  - name: a\n    sim: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone := "name=gone,url=http://127.0.0.1:1,model=m"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // stderr
	}{
		{"no candidates", []string{"--objective", "chat"}, ExitUsage,
			"Error: no candidates: give --candidates FILE or --target name=N,url=U\nTry: servebench decide -h\n"},
		{"a name used twice, across the file and --target", []string{"--candidates", cands, "--objective", "chat", "--target", "name=a,url=http://127.0.0.1:1"}, ExitUsage,
			"Error: candidate name \"a\" is used twice\nTry: servebench decide -h\n"},
		{"no objective", []string{"--candidates", cands}, ExitUsage,
			"Error: no objective: give --objective NAME|FILE, --slo, or 'objective:' in the candidates file\nTry: servebench decide -h\n"},
		{"a missing candidates file", []string{"--candidates", filepath.Join(dir, "none.yaml"), "--objective", "chat"}, ExitUsage,
			"Error: --candidates: open " + filepath.Join(dir, "none.yaml") + ": no such file or directory\nTry: servebench decide -h\n"},
		{"a flag of run's, hinted as decide's", []string{"--candidates", cands, "--objective", "chat", "--rate", "0"}, ExitUsage,
			"Error: --rate \"0\": \"0\" is not a positive number of requests per second\nTry: servebench decide --candidates FILE --rate 0.5,1,2\n"},
		{"a format with no renderer for a decision", []string{"--candidates", cands, "--objective", "chat", "--format", "csv"}, ExitUsage,
			"Error: --format csv: decide prints its decision as text, markdown, json\nTry: servebench decide --candidates FILE --format markdown  or  --json\n"},
		{"a server candidate that is not there", []string{"--candidates", cands, "--objective", "chat", "--target", gone}, ExitFailure,
			"Error: candidate gone: preflight: no server answers at http://127.0.0.1:1 (connection refused)\nTry: start the server, or check the host and port in --url\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMainOnce(t, append([]string{"decide"}, tc.args...)...)
			if code != tc.code || stderr != tc.want || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant %d and:\n%s", code, stdout, stderr, tc.code, tc.want)
			}
		})
	}
}
