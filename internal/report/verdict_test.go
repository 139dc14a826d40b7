package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

const verdictObjective = `name: demo
load:
  concurrency: [1, 2, 4, 8]
  target: 4
context_length: 8192
no_oom: true
slos:
  - ttft p95 <= 300ms
  - speed p95 >= 20 tok/s
  - error_rate <= 1%
`

// verdictFixture is a sweep where c=1..4 meet the objective and c=8 does
// not: its first tokens wait behind a full batch. Each load runs twice
// (as with --repeat 2), so intervals are shown.
func verdictFixture(t *testing.T) (*slo.Objective, *slo.Verdict, *metrics.Summary) {
	t.Helper()
	o, err := slo.ParseObjective([]byte(verdictObjective))
	if err != nil {
		t.Fatal(err)
	}
	var ev slo.Evaluator
	var agg metrics.Aggregator
	point, id := 0, int64(0)
	for _, c := range []int{1, 2, 4, 8} {
		for rep := range 2 {
			for i := range 20 {
				// Up to 4 in flight the batch grows; at 8 half wait.
				inFlight := min(c, 4)
				ttft, gap := int64(100+(10*i+7*rep)%50), int64(20+inFlight)
				if c == 8 {
					ttft, gap = 200+int64(30*i+9*rep), 24
				}
				r := rec(point, c, id, int64(i/inFlight)*400, ttft, gap, 11)
				if c == 8 && i == 3 {
					r.Error, r.FirstTokenNS, r.Chunks, r.OutputTokens = &record.Error{Class: record.ClassHTTP5xx}, 0, nil, 0
				}
				ev.Add(r)
				agg.Add(r)
				id++
			}
			point++
		}
	}
	checks := o.Checks()
	pts := ev.Evaluate(checks, slo.Options{Intervals: true, Iterations: 200, Seed: 3})
	v := slo.Judge(o, pts, nil, map[record.ServerKey]string{record.ServerMaxModelLen: "131072"})
	return o, v, metrics.Summarize(nil, &agg)
}

func rec(point, conc int, id, sent, ttft, gap int64, n int) *record.Record {
	r := &record.Record{Schema: record.Schema, Point: point, Load: record.Load{Concurrency: conc}, ID: id,
		Phase: record.PhaseMeasured, API: "openai-chat", SentNS: sent * msNS, ScheduledNS: sent * msNS,
		PromptTokens: 512, OutputTokens: n}
	for i := range n {
		r.Chunks = append(r.Chunks, record.Chunk{AtNS: (ttft + int64(i)*gap) * msNS, Tokens: 1})
	}
	r.FirstTokenNS = r.SentNS + ttft*msNS
	r.FirstOutputNS = r.FirstTokenNS
	r.EndNS = r.SentNS + (ttft+int64(n-1)*gap)*msNS
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func TestVerdictGolden(t *testing.T) {
	o, v, _ := verdictFixture(t)
	var buf bytes.Buffer
	if err := Verdict(&buf, o, v); err != nil {
		t.Fatal(err)
	}
	golden(t, "verdict.text.golden", buf.Bytes())
}

func TestDecisionGolden(t *testing.T) {
	o, v, _ := verdictFixture(t)
	fails := *v
	fails.Holds = false
	srv := map[record.ServerKey]string{"max_model_len": "131072", "runtime": "vllm"}
	d := slo.Decide(o, []slo.Outcome{
		{Candidate: slo.Candidate{Name: "small", Labels: map[string]string{"gpus": "1", "cost": "1", "gpu": "L4"}}, Verdict: &fails,
			Binding: v.Capacity.FailedSLOs, Server: map[record.ServerKey]string{"max_model_len": "8192", "runtime": "vllm"}},
		{Candidate: slo.Candidate{Name: "mid", Labels: map[string]string{"gpus": "1", "cost": "2", "gpu": "L40S"}}, Verdict: v,
			Binding: v.Capacity.FailedSLOs, Server: srv},
		{Candidate: slo.Candidate{Name: "big", Labels: map[string]string{"gpus": "2", "cost": "4", "gpu": "H100", "region": "eu"}}, Verdict: v,
			Server: srv},
		{Candidate: slo.Candidate{Name: "gone", Labels: map[string]string{"gpus": "1"}}, Error: "connection refused"},
	})
	for format, render := range map[string]func(io.Writer, *slo.Decision) error{"text": Decision, "markdown": DecisionMarkdown} {
		var buf bytes.Buffer
		if err := render(&buf, d); err != nil {
			t.Fatal(err)
		}
		golden(t, "decision."+format+".golden", buf.Bytes())
	}
}

// TestVerdictJSONDocumented: every key of the objective, the verdict and
// decide's JSON is documented in docs/OUTPUT.md, and the fixture's
// values are the ones the verdict computed.
func TestVerdictJSONDocumented(t *testing.T) {
	o, v, sum := verdictFixture(t)
	var buf bytes.Buffer
	if err := ObjectiveJSON(&buf, &slo.Report{Summary: sum, Objective: o, Verdict: v}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["schema"] != metrics.SummarySchema || got["points"] == nil {
		t.Error("the summary's own fields are kept")
	}
	verdict := got["verdict"].(map[string]any)
	capy := verdict["capacity"].(map[string]any)
	if verdict["holds"] != true || capy["load"].(map[string]any)["concurrency"] != 4.0 ||
		capy["fails_at"].(map[string]any)["concurrency"] != 8.0 || capy["method"] != "sweep" {
		t.Errorf("verdict %v", verdict)
	}
	pt := verdict["points"].([]any)[3].(map[string]any)
	chk := pt["slos"].([]any)[0].(map[string]any)
	if pt["requests"] != 40.0 || pt["good_requests"] == nil || pt["attainment"] == nil || chk["ci"] == nil ||
		chk["certainty"] != "fail" || chk["stat"] != "p95" || chk["field"] != "ttft_ms" || chk["pass"] != false {
		t.Errorf("c=8 point %v", pt)
	}
	d := slo.Decide(o, []slo.Outcome{{Candidate: slo.Candidate{Name: "a", Labels: map[string]string{"gpus": "1"}},
		Verdict: v, Server: map[record.ServerKey]string{"quantization": "q4"}}, {Candidate: slo.Candidate{Name: "b"}, Error: "x",
		Server: map[record.ServerKey]string{"quantization": "q8"}}})
	var dbuf bytes.Buffer
	DecisionJSON(&dbuf, d)
	var dj map[string]any
	json.Unmarshal(dbuf.Bytes(), &dj)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "OUTPUT.md"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	collectKeys(map[string]any{"objective": got["objective"], "verdict": verdict}, keys)
	collectKeys(dj, keys)
	for k := range keys {
		if !bytes.Contains(doc, []byte("`"+k+"`")) && !bytes.Contains(doc, []byte("`"+k+"[]`")) {
			t.Errorf("JSON key %q is not documented in docs/OUTPUT.md", k)
		}
	}
}

func collectKeys(v any, keys map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			keys[k] = true
			if k != "values" && k != "labels" && k != "server" { // maps keyed by name
				collectKeys(c, keys)
			}
		}
	case []any:
		for _, c := range x {
			collectKeys(c, keys)
		}
	}
}

// decide's capacity column: a lower bound is marked ≥, also when what
// passed above it was not held (bounded by the sample).
func TestDecisionCapacityCell(t *testing.T) {
	c := func(n int) *record.Load { return &record.Load{Concurrency: n} }
	tests := []struct {
		capy slo.Capacity
		want string
	}{
		{slo.Capacity{Found: true, Load: c(8), FailsAt: c(9)}, "c=8"},
		{slo.Capacity{Found: true, Load: c(4096), BoundedBy: slo.BoundedBySearchLimit}, "≥c=4096"},
		{slo.Capacity{Found: true, Load: c(8), FailsAt: c(12), BoundedBy: slo.BoundedBySample}, "≥c=8"},
		{slo.Capacity{FailsAt: c(1)}, "<c=1"},
	}
	for _, tt := range tests {
		row := decisionRow(slo.Outcome{Candidate: slo.Candidate{Name: "x"}, Verdict: &slo.Verdict{Capacity: tt.capy}}, false)
		if !slices.Contains(row, tt.want) {
			t.Errorf("capacity %+v: row %q lacks %q", tt.capy, row, tt.want)
		}
	}
}

func TestVerdictMarkdownGolden(t *testing.T) {
	o, v, _ := verdictFixture(t)
	var buf bytes.Buffer
	if err := VerdictMarkdown(&buf, o, v); err != nil {
		t.Fatal(err)
	}
	golden(t, "verdict.markdown.golden", buf.Bytes())
}

func TestObjectiveCSVGolden(t *testing.T) {
	o, v, sum := verdictFixture(t)
	var buf bytes.Buffer
	if err := ObjectiveCSV(&buf, &slo.Report{Summary: sum, Objective: o, Verdict: v}); err != nil {
		t.Fatal(err)
	}
	golden(t, "verdict.csv.golden", buf.Bytes())
}

// textPieces splits terminal output into what it says: each line's
// cells, which the terminal separates by two spaces or more.
func textPieces(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, p := range regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1) {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestMarkdownVerdictSaysWhatTextSays: every cell, line and word the
// terminal verdict prints — SLO cells, goodput, attainment, the load's
// verdict, the legend, intervals, capacity, saturation, requirements, the
// verdict sentence and the closing line — is in the Markdown verdict, in
// Markdown tables with one row per load.
func TestMarkdownVerdictSaysWhatTextSays(t *testing.T) {
	o, v, _ := verdictFixture(t)
	failing := *v
	failing.Holds, failing.Failing = false, true
	for name, v := range map[string]*slo.Verdict{"holds": v, "failing": &failing} {
		var text, md bytes.Buffer
		if err := Verdict(&text, o, v); err != nil {
			t.Fatal(err)
		}
		if err := VerdictMarkdown(&md, o, v); err != nil {
			t.Fatal(err)
		}
		pieces := textPieces(text.String())
		if len(pieces) < 60 {
			t.Fatalf("%s: only %d pieces of text in:\n%s", name, len(pieces), text.String())
		}
		for _, p := range pieces {
			if !strings.Contains(md.String(), p) {
				t.Errorf("%s: the text verdict says %q, the Markdown verdict does not:\n%s", name, p, md.String())
			}
		}
		// Two tables (verdict, intervals), each a heading, a separator and
		// one row per load.
		var rows int
		for _, l := range strings.Split(md.String(), "\n") {
			if strings.HasPrefix(l, "| c=") {
				rows++
			}
		}
		if want := 2 * len(v.Points); rows != want || strings.Count(md.String(), "\n|---|") != 2 {
			t.Errorf("%s: %d table rows, want %d in two tables:\n%s", name, rows, want, md.String())
		}
		if !strings.Contains(md.String(), "- **verdict**: "+v.Text+"\n") {
			t.Errorf("%s: the verdict sentence is not its own list item:\n%s", name, md.String())
		}
	}
}

// TestObjectiveCSV reads the objective's CSV as a spreadsheet would: one
// table, every row as wide as the heading, each point carrying its load's
// verdict (both repeats of a load the same) and the objective's.
func TestObjectiveCSV(t *testing.T) {
	o, v, sum := verdictFixture(t)
	var buf bytes.Buffer
	if err := ObjectiveCSV(&buf, &slo.Report{Summary: sum, Objective: o, Verdict: v}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll() // fails on rows of another width
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+8 {
		t.Fatalf("%d rows, want a heading and 8 points (4 loads × 2 repeats)", len(rows))
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "OUTPUT.md"))
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
		if i >= len(rows[0])-1-len(csvVerdict) && !bytes.Contains(doc, []byte("`"+h+"`")) {
			t.Errorf("CSV column %q is not documented in docs/OUTPUT.md", h)
		}
	}
	for _, r := range rows[1:] {
		conc := r[col["concurrency"]]
		wantPass, wantFailed := "true", ""
		if conc == "8" {
			wantPass, wantFailed = "false", "ttft p95 <= 300ms; error_rate <= 1%"
		}
		got := func(name string) string {
			i, ok := col[name]
			if !ok {
				t.Fatalf("no column %q in %q", name, rows[0])
			}
			return r[i]
		}
		if got("objective") != "demo" || got("objective_holds") != "true" || got("capacity") != "c=4" ||
			got("slo_pass") != wantPass || got("slo_failed") != wantFailed {
			t.Errorf("c=%s: objective %q holds %q capacity %q pass %q failed %q", conc, got("objective"),
				got("objective_holds"), got("capacity"), got("slo_pass"), got("slo_failed"))
		}
		if conc == "8" && (!strings.Contains(got("slo_shortfalls"), "ttft p95 ") || got("attainment") == "" || got("attainment") == "1.0000") {
			t.Errorf("c=8: shortfalls %q attainment %q", got("slo_shortfalls"), got("attainment"))
		}
		if conc == "1" && (got("goodput_rps") == "" || got("attainment") != "1.0000") {
			t.Errorf("c=1: goodput %q attainment %q", got("goodput_rps"), got("attainment"))
		}
	}
}
