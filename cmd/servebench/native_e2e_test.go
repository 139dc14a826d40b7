package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// TestNativeAPIsAgainstSimulator runs the built binary with each engine's
// native API against the built-in simulator, which serves their shapes:
// every request completes with the server's own counts, and the server
// timings each engine reports reach the records and the summary.
func TestNativeAPIsAgainstSimulator(t *testing.T) {
	tests := []struct {
		api string
		// check looks at one record's server timing.
		check func(t *testing.T, r record.Record)
		// serverSpeeds: the summary has per-request server prefill and
		// decode speeds (llama.cpp's timings).
		serverSpeeds bool
	}{
		{record.APILlamaCppCompletion, func(t *testing.T, r record.Record) {
			s := r.Server
			if s == nil || s.PromptEvalCount != r.PromptTokens || s.EvalCount != r.OutputTokens ||
				s.PromptEvalDuration <= 0 || s.EvalDuration <= 0 {
				t.Errorf("record %d: server timing %+v, prompt %d, output %d", r.ID, s, r.PromptTokens, r.OutputTokens)
				return
			}
			if ttft := r.FirstTokenNS - r.SentNS; s.PromptEvalDuration > ttft {
				t.Errorf("record %d: prompt_ms %d ns longer than the client's TTFT %d ns", r.ID, s.PromptEvalDuration, ttft)
			}
		}, true},
		{record.APISGLangGenerate, func(t *testing.T, r record.Record) {
			if s := r.Server; s == nil || s.TotalDuration <= 0 || s.TotalDuration > r.EndNS-r.SentNS {
				t.Errorf("record %d: server timing %+v, client e2e %d ns", r.ID, s, r.EndNS-r.SentNS)
			}
		}, false},
		{record.APITGIGenerate, func(t *testing.T, r record.Record) {
			if r.Server != nil {
				t.Errorf("record %d: server timing %+v from TGI, which reports none", r.ID, r.Server)
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.api, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			code, _, stderr := run(t, "run", "--api", tt.api, "--concurrency", "2", "--requests", "6", "--warmup", "0",
				"--prompt-tokens", "32", "--output-tokens", "8", "--out", dir)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			recs := jsonLines[record.Record](t, filepath.Join(dir, "records.jsonl"))
			if len(recs) != 6 {
				t.Fatalf("%d records, want 6", len(recs))
			}
			for _, r := range recs {
				if r.Error != nil || r.API != tt.api || r.OutputTokens != 8 || r.OutputTokensSource != record.SourceUsage ||
					r.PromptTokensSource != record.SourceUsage || r.FinishReason != "length" || len(r.Chunks) != 8 {
					t.Errorf("record %d: api %s, error %+v, output %d (%s), prompt source %s, finish %q, %d chunks",
						r.ID, r.API, r.Error, r.OutputTokens, r.OutputTokensSource, r.PromptTokensSource, r.FinishReason, len(r.Chunks))
				}
				tt.check(t, r)
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var s struct {
				Points []struct {
					ServerPrefill struct{ Count int } `json:"server_prefill_tps"`
					ServerDecode  struct{ Count int } `json:"server_decode_tps"`
				} `json:"points"`
			}
			if err := json.Unmarshal(b, &s); err != nil || len(s.Points) != 1 {
				t.Fatalf("summary: %v %s", err, b)
			}
			want := map[bool]int{true: 6, false: 0}[tt.serverSpeeds]
			if p := s.Points[0]; p.ServerPrefill.Count != want || p.ServerDecode.Count != want {
				t.Errorf("server prefill and decode speeds from %d and %d requests, want %d", p.ServerPrefill.Count, p.ServerDecode.Count, want)
			}
		})
	}
}

// The run in testdata/run-llamacpp is a small recorded run of the
// llamacpp-completion API against the built-in simulator, whose prefill
// speed column comes from llama.cpp's per-request timings. It was made with
//
//	servebench run --sim-config testdata/run-llamacpp-sim.yaml --api llamacpp-completion \
//	    --concurrency 1,2 --requests 8 --warmup 1 --prompt-tokens 64 --output-tokens 16 --out testdata/run-llamacpp
//
// TestReportGoldenLlamaCpp renders it as text and JSON and compares them
// with testdata/report/llamacpp-*.golden (-update rewrites them).
func TestReportGoldenLlamaCpp(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		name := "llamacpp-" + format
		t.Run(name, func(t *testing.T) {
			reportGolden(t, name, "report", "--format", format, filepath.Join("testdata", "run-llamacpp"))
		})
	}
}
