package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// runRecords runs servebench run against the built-in simulator with args
// and returns its records.
func runRecords(t *testing.T, args ...string) []record.Record {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runMain(t, append([]string{"run", "--out", dir, "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("run %v: exit %d\n%s", args, code, stderr)
	}
	f, err := os.Open(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []record.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r record.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Error != nil {
			t.Errorf("request %d failed: %+v", r.ID, r.Error)
		}
		recs = append(recs, r)
	}
	return recs
}

// bySession groups records by session, in turn order, checking that turns
// run 1, 2, 3 … and that each starts after the previous one ended.
func bySession(t *testing.T, recs []record.Record) map[int][]record.Record {
	t.Helper()
	s := map[int][]record.Record{}
	for _, r := range recs {
		s[r.Session] = append(s[r.Session], r)
	}
	for id, turns := range s {
		for i := range turns {
			for j := i + 1; j < len(turns); j++ {
				if turns[j].Turn < turns[i].Turn {
					turns[i], turns[j] = turns[j], turns[i]
				}
			}
		}
		for i, r := range turns {
			if id == 0 || r.Turn != i+1 {
				t.Fatalf("session %d: turn %d in position %d", id, r.Turn, i+1)
			}
			if i > 0 && r.SentNS < turns[i-1].EndNS {
				t.Errorf("session %d turn %d sent before turn %d ended", id, r.Turn, i)
			}
		}
	}
	return s
}

// Multi-turn against the simulator, whose tokenizer is one token per word
// under a Llama-3-shaped template: turn k+1's prompt is exactly turn k's
// prompt, plus turn k's answer as the server generated it, plus a new user
// message of --prompt-tokens (the template's tokens for the two messages
// included). That holds only if the actual answers are in the history.
func TestRunMultiTurnHistoryHasAnswers(t *testing.T) {
	recs := runRecords(t, "--multi-turn", "3", "--concurrency", "2", "--requests", "12",
		"--prompt-tokens", "40", "--output-tokens", "uniform:5,15")
	sessions := bySession(t, recs)
	if len(sessions) < 4 {
		t.Errorf("%d sessions for 12 requests of 3 turns", len(sessions))
	}
	for id, turns := range sessions {
		for i, r := range turns {
			if r.PromptTokens != r.PromptTokensRequested || r.PromptTokensSource != record.SourceUsage {
				t.Errorf("session %d turn %d: requested %d, server counted %d (%s)", id, r.Turn, r.PromptTokensRequested, r.PromptTokens, r.PromptTokensSource)
			}
			if i == 0 && r.PromptTokens != 40 {
				t.Errorf("session %d: first turn %d tokens, want 40", id, r.PromptTokens)
			}
			if i > 0 {
				prev := turns[i-1]
				if want := prev.PromptTokens + prev.OutputTokens + 40; r.PromptTokens != want {
					t.Errorf("session %d turn %d: %d prompt tokens, want %d + %d + 40 = %d", id, r.Turn, r.PromptTokens,
						prev.PromptTokens, prev.OutputTokens, want)
				}
			}
		}
	}
}

func TestRunMultiTurnContextCap(t *testing.T) {
	recs := runRecords(t, "--multi-turn", "10", "--context-tokens", "150", "--concurrency", "2", "--requests", "9",
		"--prompt-tokens", "40", "--output-tokens", "10")
	// 40, 90, 140 fit with 10 output tokens; a fourth turn would be 190.
	for id, turns := range bySession(t, recs) {
		for _, r := range turns {
			if r.PromptTokens+r.OutputTokensRequested > 150 {
				t.Errorf("session %d turn %d: %d + %d tokens over --context-tokens 150", id, r.Turn, r.PromptTokens, r.OutputTokensRequested)
			}
		}
		if last := turns[len(turns)-1]; last.Turn > 3 {
			t.Errorf("session %d reached turn %d", id, last.Turn)
		}
	}
}

// Open loop: arrivals at the rate take a session's next turn once its
// answer is in and the think time has passed, else start a session.
func TestRunMultiTurnOpenLoopThinkTime(t *testing.T) {
	// Rate and think time are model time; records hold the built-in
	// simulator's wall time, 10× faster.
	const think, scale = 300 * time.Millisecond, 10
	recs := runRecords(t, "--multi-turn", "3", "--rate", "20", "--arrival", "constant", "--requests", "24",
		"--think-time", think.String(), "--prompt-tokens", "40", "--output-tokens", "5")
	later := 0
	for id, turns := range bySession(t, recs) {
		for i, r := range turns[1:] {
			later++
			if gap := time.Duration(r.ScheduledNS-turns[i].EndNS) * scale; gap < think {
				t.Errorf("session %d turn %d scheduled %v after the answer, think time %v", id, r.Turn, gap, think)
			}
		}
	}
	if later == 0 {
		t.Error("no session went past its first turn")
	}
}

func TestRunOtherWorkloads(t *testing.T) {
	// --long-context: prompt + max_tokens is exactly N, as the server counts.
	for _, r := range runRecords(t, "--long-context", "2048", "--output-tokens", "16", "--concurrency", "2", "--requests", "4") {
		if r.PromptTokens != 2032 || r.PromptTokensRequested != 2032 {
			t.Errorf("long context: prompt %d tokens (requested %d), want 2032", r.PromptTokens, r.PromptTokensRequested)
		}
	}
	// --shared-prefix keeps the exact total length.
	for _, r := range runRecords(t, "--shared-prefix", "64", "--prefix-groups", "2", "--prompt-tokens", "200", "--concurrency", "2", "--requests", "6") {
		if r.PromptTokens != 200 {
			t.Errorf("shared prefix: prompt %d tokens, want 200", r.PromptTokens)
		}
	}
	// A JSONL file: its lengths as requested, counted as the server counts.
	recs := runRecords(t, "--dataset", "../workload/testdata/prompts.jsonl", "--concurrency", "1", "--requests", "8", "--output-tokens", "33")
	outs := map[int]bool{}
	for _, r := range recs {
		if r.PromptTokens != r.PromptTokensRequested {
			t.Errorf("dataset: requested %d, server counted %d", r.PromptTokensRequested, r.PromptTokens)
		}
		outs[r.OutputTokensRequested] = true
	}
	for _, want := range []int{64, 120, 33, 90, 40, 200, 16, 150} {
		if !outs[want] {
			t.Errorf("dataset: no request with max_tokens %d (the file's lengths, 33 drawn): %v", want, outs)
		}
	}
	// ShareGPT conversations replayed as sessions.
	sessions := bySession(t, runRecords(t, "--dataset", "../workload/testdata/sharegpt_sample.json", "--multi-turn", "5",
		"--concurrency", "2", "--requests", "10"))
	if len(sessions[1]) != 3 {
		t.Errorf("the first conversation's 3 human turns ran as %d turns", len(sessions[1]))
	}
}

func TestRunWorkloadUsageErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"prompt\": \"ok\"}\n{\"prompt\": \"\"}\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"think without sessions", []string{"--think-time", "1s"}, "--think-time"},
		{"missing file", []string{"--dataset", "nope.jsonl"}, "--dataset: open nope.jsonl"},
		{"bad line", []string{"--dataset", bad}, "bad.jsonl:2: \"prompt\" is empty"},
		{"sessions on completions", []string{"--multi-turn", "3", "--api", "openai-completions"}, "chat API"},
		{"prefix too long", []string{"--shared-prefix", "600"}, "--shared-prefix: 600"},
		{"long without room", []string{"--long-context", "100", "--output-tokens", "200"}, "--long-context"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, append([]string{"run", "--requests", "1", "--concurrency", "1"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", tt.name, code, stderr, tt.want)
		}
	}
}

// docs/WORKLOADS.md documents every workload flag.
func TestWorkloadFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/WORKLOADS.md")
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f runFlags
	f.defineWorkload(fs)
	fs.VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(string(doc), "`--"+fl.Name) {
			t.Errorf("docs/WORKLOADS.md does not document --%s", fl.Name)
		}
	})
}
