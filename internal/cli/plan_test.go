package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/gguf"
	"github.com/servebench/servebench/internal/rundir"
)

// The -update flag may be defined by another test file of this package;
// define it only if not.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const planModels = "../plan/testdata/models/"

// planRun runs servebench with args and returns the exit code, stdout and
// stderr.
func planRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	code := env.Main(context.Background(), args)
	return code, stdout.String(), stderr.String()
}

func planGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "plan", name)
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/cli -run Plan -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file\n--- got ---\n%s", name, got)
	}
}

// TestPlanGolden runs the plan command lines of docs/PLANNER.md and
// compares their output with golden files.
func TestPlanGolden(t *testing.T) {
	worked := []string{"plan", "--config", planModels + "Llama-3.1-8B", "--prompt-tokens", "4000", "--output-tokens", "300",
		"--concurrency", "4", "--ttft", "1.5s", "--min-tps", "20"}
	tests := []struct {
		name string
		args []string
	}{
		{"worked-example.txt", worked},
		{"worked-example.json", append(append([]string{}, worked...), "--json")},
		{"llama-70b-fp8-tp2.txt", []string{"plan", "--config", planModels + "Llama-3.1-70B", "--weights", "fp8", "--tp", "2",
			"--gpu", "H100-SXM,H200,L40S", "--concurrency", "16", "--prompt-tokens", "2000", "--output-tokens", "500"}},
		{"mixtral-ollama-q4.txt", []string{"plan", "--config", planModels + "Mixtral-8x7B-v0.1", "--engine", "ollama",
			"--weights", "q4_k_m", "--kv-dtype", "q8_0", "--parallel", "2", "--context", "8192", "--gpu", "RTX-4090,M2-Ultra,CPU-EPYC-12ch"}},
		{"compare.txt", []string{"plan", "--config", planModels + "Llama-3.1-8B", "--gpu", "H100-SXM",
			"--compare", "../plan/testdata/runs/sim-llama-8b-h100"}},
		{"compare.json", []string{"plan", "--config", planModels + "Llama-3.1-8B", "--gpu", "h100 sxm",
			"--compare", "../plan/testdata/runs/sim-llama-8b-h100", "--json"}},
		{"list-devices.txt", []string{"plan", "--list-devices"}},
	}
	for _, tt := range tests {
		code, stdout, stderr := planRun(t, tt.args...)
		if code != ExitOK {
			t.Errorf("%s: exit %d, stderr:\n%s", tt.name, code, stderr)
			continue
		}
		planGolden(t, tt.name, stdout)
	}
}

// TestPlanErrors checks exit codes and that messages name the problem.
func TestPlanErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(bad, []byte(`{"model_type": "rwkv", "num_hidden_layers": 2}`), 0o644)
	devs := filepath.Join(t.TempDir(), "devs.yaml")
	os.WriteFile(devs, []byte("devices:\n  - name: x\n    memory_gib: -1\n"), 0o644)
	llama := planModels + "Llama-3.1-8B"
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no model", []string{"plan"}, ExitUsage, "give exactly one of --config and --gguf"},
		{"both models", []string{"plan", "--config", llama, "--gguf", "x.gguf"}, ExitUsage, "give exactly one"},
		{"context beyond the model", []string{"plan", "--config", planModels + "Phi-3-mini-4k-instruct", "--prompt-tokens", "4000", "--output-tokens", "200"},
			ExitUsage, "context 4200 > 4096 (the model's maximum context)"},
		{"unknown architecture", []string{"plan", "--config", bad}, ExitFailure, "unsupported architecture model_type=\"rwkv\""},
		{"missing config", []string{"plan", "--config", "/nonexistent/dir"}, ExitFailure, "no such file"},
		{"unknown device", []string{"plan", "--config", llama, "--gpu", "B200"}, ExitUsage, `unknown device "B200"`},
		{"bad devices file", []string{"plan", "--config", llama, "--devices", devs}, ExitUsage, "memory_gib must be a positive number"},
		{"compare needs one device", []string{"plan", "--config", llama, "--compare", "x"}, ExitUsage, "exactly one device"},
		{"compare missing run", []string{"plan", "--config", llama, "--gpu", "L4", "--compare", "/nonexistent"}, ExitFailure, "summary.json"},
		{"wrong KV type", []string{"plan", "--config", llama, "--kv-dtype", "q4_0"}, ExitUsage, "not offered by vLLM"},
		{"headroom twice", []string{"plan", "--config", llama, "--headroom", "5", "--gpu-memory-utilization", "0.9"}, ExitUsage, "not both"},
		{"bad flag", []string{"plan", "--nope"}, ExitUsage, ""},
	}
	for _, tt := range tests {
		code, _, stderr := planRun(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tt.name, code, stderr, tt.code, tt.want)
		}
	}
}

// TestPlanUserDevice plans on a device from a --devices file that replaces
// a catalog entry.
func TestPlanUserDevice(t *testing.T) {
	devs := filepath.Join(t.TempDir(), "devs.yaml")
	os.WriteFile(devs, []byte(`devices:
  - name: L4
    memory_gib: {value: 24, source: "NVIDIA L4 datasheet"}
    usable_gib: {value: 23.5, source: "measured here"}
    bandwidth_gbs: {value: 300, source: "NVIDIA L4 datasheet"}
    bf16_tflops: {value: 121, source: "NVIDIA L4 datasheet"}
`), 0o644)
	code, stdout, stderr := planRun(t, "plan", "--config", planModels+"Qwen2.5-7B", "--devices", devs, "--gpu", "l4", "--json")
	if code != ExitOK || !strings.Contains(stdout, `"usable_bytes": 25232932864`) || strings.Contains(stdout, `"unsourced"`) {
		t.Errorf("exit %d, stderr %s\n%s", code, stderr, stdout)
	}
}

// TestPlanDocExample runs the example in docs/PLANNER.md and compares its
// output with the page, so that the page cannot drift from the code.
func TestPlanDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/PLANNER.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```text\n$ servebench ")
	if !ok {
		t.Fatal("docs/PLANNER.md has no ```text block starting with $ servebench")
	}
	block, _, _ = strings.Cut(block, "```")
	cmd, want, _ := strings.Cut(block, "\n")
	// The page's paths are the repository's, from its root, as a reader
	// runs them.
	args := strings.Fields(cmd)
	for i, a := range args {
		if strings.Contains(a, "/") {
			if _, err := os.Stat(filepath.Join("../..", a)); err != nil {
				t.Errorf("docs/PLANNER.md's example names %s, which is not in the repository: %v", a, err)
			}
			args[i] = filepath.Join("../..", a)
		}
	}
	code, got, stderr := planRun(t, args...)
	if code != ExitOK || got != want {
		t.Errorf("exit %d, stderr %s; docs/PLANNER.md shows:\n%s\nthe command prints:\n%s", code, stderr, want, got)
	}
}

// TestPlanGGUF writes servebench's random test model with internal/gguf and
// plans it from its header via --gguf, as Ollama serves it: 4 slots of
// num_ctx 4096 allocate 128 MiB of f16 KV (Ollama 0.17.4 logs the same).
func TestPlanGGUF(t *testing.T) {
	f, err := gguf.NewLlama(gguf.DefaultLlama)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.gguf")
	if _, err := f.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := planRun(t, "plan", "--gguf", path, "--engine", "ollama", "--parallel", "4", "--concurrency", "4",
		"--context", "4096", "--prompt-tokens", "128", "--output-tokens", "64", "--gpu", "CPU-DDR5-2ch", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"kv_bytes": 134217728`, `"kv_tokens": 16384`, `"weight_format": "Q8_0"`, `"layers": 8`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %s:\n%s", want, stdout)
		}
	}
}

// TestPlanCompareKilledRun: --compare on a run that left no summary.json
// (killed) compares with the summary rebuilt from its records, as every
// reader of a run directory rebuilds it, and says so; the comparison is
// the one the finished run's summary.json gives.
func TestPlanCompareKilledRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runMain(t, "run", "--concurrency", "1,2", "--requests", "4", "--output-tokens", "16", "--prompt-tokens", "64",
		"--out", dir, "--no-history"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	args := []string{"plan", "--config", planModels + "Llama-3.1-8B", "--gpu", "H100-SXM", "--compare", dir, "--json"}
	code, want, stderr := planRun(t, args...)
	if code != 0 {
		t.Fatalf("plan --compare: exit %d\n%s", code, stderr)
	}
	os.Remove(filepath.Join(dir, rundir.SummaryFile))
	code, got, stderr := planRun(t, args...)
	if code != 0 || !strings.Contains(stderr, "compared with the summary rebuilt from its records") {
		t.Fatalf("plan --compare on a killed run: exit %d, stderr %q; want the summary rebuilt, with a warning", code, stderr)
	}
	if got != want {
		t.Errorf("the rebuilt summary compares otherwise:\n%s\nwant\n%s", got, want)
	}
}
