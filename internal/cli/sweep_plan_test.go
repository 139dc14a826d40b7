package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSweepPlanArgsRefused: --plan-args that cannot plan every
// configuration are refused before any server starts, naming the flag
// (exit 2). The command would fail if it were started: the sweep directory
// stays without a configuration's server.log.
func TestSweepPlanArgsRefused(t *testing.T) {
	model := filepath.Join("..", "plan", "testdata", "models", "Llama-3.1-8B")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no --plan-config", []string{"--plan-args", "--gpu H100-SXM"}, "--plan-args needs --plan-config"},
		{"no device", []string{"--plan-config", model}, "give exactly one device, --gpu NAME"},
		{"two devices", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM,H200"}, "give exactly one device"},
		{"the model twice", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --config " + model}, "may not give --config: the model is --plan-config"},
		{"a GGUF beside it", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --gguf m.gguf"}, "may not give --gguf"},
		{"a comparison", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --compare runs/x"}, "may not give --compare"},
		{"JSON", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --json"}, "may not give --json"},
		{"the catalog", []string{"--plan-config", model, "--plan-args", "--list-devices"}, "may not give --list-devices"},
		{"a prompt length", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --prompt-tokens 100"}, "may not give --prompt-tokens: the sweep's workload"},
		{"an output length", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --output-tokens 100"}, "may not give --output-tokens"},
		{"users", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --concurrency 8"}, "may not give --concurrency"},
		{"a TTFT target", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --ttft 1s"}, "may not give --ttft"},
		{"a speed target", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --min-tps 20"}, "may not give --min-tps"},
		{"an unknown flag", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --tensor 2"}, "--plan-args for seqs=2: flag provided but not defined: -tensor"},
		{"a positional model", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM " + model}, "unexpected argument"},
		{"a misspelt parameter", []string{"--plan-config", model, "--plan-args", "--gpu H100-SXM --tp {sqes}"}, "--plan-args: {sqes} is no parameter"},
		// one configuration's expanded args bad: refused before the first starts
		{"the second configuration's", []string{"--param", "seqs=2,0", "--plan-config", model, "--plan-args", "--gpu H100-SXM --tp {seqs}"}, "--plan-args for seqs=0: --tp must be at least 1"},
		{"an unknown device", []string{"--plan-config", model, "--plan-args", "--gpu H900"}, "H900"},
		{"no model there", []string{"--plan-config", "no/such/model", "--plan-args", "--gpu H100-SXM"}, "--plan-config: "},
	} {
		out := filepath.Join(t.TempDir(), "s")
		args := append([]string{"sweep", "--serve", "no-such-server --port {port} --seqs {seqs}", "--out", out}, c.args...)
		if !slices.Contains(args, "--param") {
			args = append(args, "--param", "seqs=2,1")
		}
		code, _, stderr := runMain(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "Try: ") {
			t.Errorf("%s: exit %d, %q; want exit 2 saying %q, and what to try", c.name, code, lastLines(stderr, 3), c.want)
		}
		if _, err := os.Stat(filepath.Join(out, "seqs-2", "server.log")); err == nil {
			t.Errorf("%s: a server was started", c.name)
		}
	}
}
