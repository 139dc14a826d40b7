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

// kvFiles writes an engine log with the given KV-cache line and a plan
// (servebench.plan/v1, the fields the check reads) of 128 MiB in 4 x 4096
// cells.
func kvFiles(t *testing.T, line string) (log, plan string) {
	dir := t.TempDir()
	log, plan = filepath.Join(dir, "serve.log"), filepath.Join(dir, "plan.json")
	doc := `{"schema":"servebench.plan/v1","model":{"attention_layers":8,"kv_type":"fp16"},` +
		`"engine":{"name":"Ollama","sequences":4},` +
		`"devices":[{"device":"CPU","supported":true,"budget":{"kv_bytes":134217728,"kv_tokens":16384}}]}`
	if err := os.WriteFile(plan, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, []byte("time=1 msg=load\n"+line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return log, plan
}

func TestRun(t *testing.T) {
	good := nativeRun(t)
	kvLog, kvPlan := kvFiles(t, "llama_kv_cache: size =  128.00 MiB (  4096 cells,   8 layers,  4/4 seqs), K (f16):   64.00 MiB, V (f16):   64.00 MiB")
	badLog, _ := kvFiles(t, "llama_kv_cache: size =   32.00 MiB (  4096 cells,   8 layers,  1/1 seqs), K (f16):   16.00 MiB, V (f16):   16.00 MiB")
	noLog, _ := kvFiles(t, "llama_context: n_ctx = 16384")
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
		// The plan's KV cache equals the log's, alone or beside the runs.
		{"kv", []string{"-kv-log", kvLog, "-kv-plan", kvPlan}, 0, "engine 128.00 MiB, plan 128.00 MiB (fp16, CPU): ok"},
		{"kv and runs", []string{"-kv-log", kvLog, "-kv-plan", kvPlan, good}, 0, "enginecheck: ok"},
		// A log of another size fails, and fails the runs' verdict too.
		{"kv differs", []string{"-kv-log", badLog, "-kv-plan", kvPlan, good}, 1, "FAIL kv cache: size: the engine logged 32.00 MiB, the plan predicts 128.00 MiB"},
		// A log without the line is a failure, not a skip.
		{"kv no line", []string{"-kv-log", noLog, "-kv-plan", kvPlan}, 1, "no \"llama_kv_cache: size =\" line"},
		// The plan is not optional.
		{"kv alone", []string{"-kv-log", kvLog}, 2, "-kv-log and -kv-plan go together"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		if all := stdout.String() + stderr.String(); code != c.code || !strings.Contains(all, c.out) {
			t.Errorf("%s: exit %d (want %d), output:\n%s", c.name, code, c.code, all)
		}
	}
}
