package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.gguf")
	tiny := []string{"-dim", "64", "-layers", "1", "-ffn", "128", "-heads", "2", "-kv-heads", "1", "-vocab-words", "10"}
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		// A model is written and summarised.
		{"write", append([]string{"-o", out}, tiny...), 0, "tensors", ""},
		// The output file is required.
		{"no -o", tiny, 2, "", "-o FILE is required"},
		// Sizes the model cannot have are a usage error naming the problem.
		{"bad dim", []string{"-o", out, "-dim", "48"}, 2, "", "multiples of 32"},
		// An unwritable path is a failure, not a usage error.
		{"bad path", append([]string{"-o", filepath.Join(dir, "no", "m.gguf")}, tiny...), 1, "", "Error:"},
		{"help", []string{"-h"}, 0, "", "Examples:"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.name, code, stdout.String(), stderr.String())
		}
	}
	info, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", info.Mode().Perm())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".mkgguf-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
