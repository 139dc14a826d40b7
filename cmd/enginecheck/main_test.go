package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// nativeRun writes a run of three consistent Ollama-native requests.
func nativeRun(t *testing.T) string {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w := record.NewWriter(f)
	for id := range int64(3) {
		w.Write(&record.Record{Schema: record.Schema, ID: id, Phase: record.PhaseMeasured, API: "ollama-generate",
			Load: record.Load{Concurrency: 1}, OutputTokens: 11, SentNS: 0, FirstTokenNS: 2e7, EndNS: 2e7 + 1e8,
			Server: &record.ServerTiming{PromptEvalDuration: 1e7, EvalCount: 11, EvalDuration: 1e8}})
	}
	f.Close()
	return dir
}

func TestRun(t *testing.T) {
	good := nativeRun(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		// A consistent run passes (client 100 tok/s, server 110: within 10%).
		{"pass", []string{good}, 0, "enginecheck: ok"},
		// The same run fails a tolerance it does not meet, loudly.
		{"fail", []string{"-decode-tolerance", "0.05", good}, 1, "enginecheck: FAIL"},
		// Asked to check nothing is a usage error, not a pass.
		{"no dirs", nil, 2, "give one or more run directories"},
		// A run directory that does not exist fails.
		{"missing", []string{filepath.Join(good, "nope")}, 1, "Error: reading run"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if all := stdout.String() + stderr.String(); code != c.code || !strings.Contains(all, c.out) {
			t.Errorf("%s: exit %d (want %d), output:\n%s", c.name, code, c.code, all)
		}
	}
}
