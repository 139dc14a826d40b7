package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepUsageErrors: a sweep that cannot run is refused before any
// server starts, naming the flag and what to do (exit 2).
func TestSweepUsageErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s")
	serve := "server --port {port} --seqs {seqs}"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", []string{"--out", out}, "--serve is required"},
		{"no directory", []string{"--serve", serve, "--param", "seqs=1"}, "--out DIR is required"},
		{"a URL", []string{"--serve", serve, "--param", "seqs=1", "--url", "http://127.0.0.1:1", "--out", out}, "takes no --url"},
		{"no port", []string{"--serve", "server --seqs {seqs}", "--param", "seqs=1", "--out", out}, "must place {port}"},
		{"a misspelt parameter", []string{"--serve", "server --port {port} --seqs {sqes}", "--param", "seqs=1", "--out", out}, "{sqes} is no parameter"},
		{"a shell pipe", []string{"--serve", "server --port {port} | tee log", "--out", out}, "not run through a shell"},
		{"an unterminated quote", []string{"--serve", "server --port {port} 'x", "--out", out}, "unterminated"},
		{"a parameter twice", []string{"--serve", serve, "--param", "seqs=1", "--param", "seqs=2", "--out", out}, "given twice"},
		{"a load naming no parameter", []string{"--serve", serve, "--param", "seqs=1", "--concurrency", "1,{slots}", "--out", out}, "{slots} is no parameter"},
		{"a load that is no number", []string{"--serve", serve, "--param", "seqs=x", "--concurrency", "{seqs}*2", "--out", out}, "--concurrency for seqs=x: "},
		{"a load that is no number, no parameter", []string{"--serve", "server --port {port}", "--concurrency", "abc", "--out", out}, "Error: --concurrency: \"abc\""},
		{"a load that is no whole number", []string{"--serve", serve, "--param", "seqs=3", "--concurrency", "{seqs}/2", "--out", out}, "not a positive whole number"},
		{"no GPUs", []string{"--serve", serve, "--param", "seqs=1", "--gpus", "{seqs}-1", "--out", out}, "--gpus"},
		{"an argument", []string{"--serve", "server", "--port", "{port}", "--out", out}, "unknown flag --port"},
		{"a flag of run's, hinted as sweep's", []string{"--serve", serve, "--param", "seqs=1", "--rate", "0", "--out", out}, "Try: servebench sweep --serve CMD --out DIR --rate 0.5,1,2"},
		{"run's help, as sweep's", []string{"--serve", serve, "--param", "seqs=1", "--prompt-tokens", "abc", "--out", out}, "Try: servebench sweep -h (workloads"},
		{"an unknown API", []string{"--serve", serve, "--param", "seqs=1", "--api", "foo", "--out", out}, `--api: unknown API "foo"`},
		{"CSV", []string{"--serve", serve, "--param", "seqs=1", "--format", "csv", "--out", out}, "--format csv: a sweep prints several tables"},
		{"no such format", []string{"--serve", serve, "--param", "seqs=1", "--format", "yaml", "--out", out}, "--format yaml: a sweep prints several tables; give text, markdown, json"},
	} {
		code, _, stderr := runMain(t, append([]string{"sweep"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want exit 2 saying %q", c.name, code, lastLines(stderr, 3), c.want)
		}
	}
}
