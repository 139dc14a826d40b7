package main

import (
	"encoding/csv"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reportPieces splits terminal output into what it says: each line's
// cells, which the terminal separates by two spaces or more.
func reportPieces(s string) []string {
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

// report --format markdown --objective says everything the text report
// says after its table — errors, cold start, warnings, every cell of the
// verdict table, capacity, saturation, the context requirement, the
// verdict sentence and the closing line — with the verdict table as a
// Markdown table and the warnings under a heading. It used to print the
// verdict as a plain-text table and drop nothing but the layout; the
// capacity and verdict lines were no list a reader could find.
func TestReportMarkdownVerdictSaysWhatTextSays(t *testing.T) {
	dir := filepath.Join("testdata", "run")
	tcode, text, _ := run(t, "report", "--format", "text", "--objective", "chat", dir)
	mcode, md, stderr := run(t, "report", "--format", "markdown", "--objective", "chat", dir)
	if tcode != 3 || mcode != 3 {
		t.Fatalf("exit %d (text) and %d (markdown), want 3 for both: %s", tcode, mcode, stderr)
	}
	after := text[strings.Index(text, "\n\nErrors by class"):]
	pieces := reportPieces(after)
	if len(pieces) < 40 {
		t.Fatalf("only %d pieces in the text report's verdict:\n%s", len(pieces), after)
	}
	for _, p := range pieces {
		if p == "Warnings:" {
			p = "### Warnings"
		}
		if !strings.Contains(md, p) {
			t.Errorf("the text report says %q, the Markdown report does not", p)
		}
	}
	for _, want := range []string{
		"\n### Objective chat · target load concurrency 8 · 6 SLOs\n\n| load | ttft p95 <= 1s |",
		"\n| c=4 | ok 94.8ms 0.09× |",
		// c=1 passes on 12 requests: too few for the tails it judges
		"\n- **capacity**: INCONCLUSIVE (concurrency 1: few_samples: too few values: ttft p95 on 12 of the 20 it needs, ",
		"\n- **context_length**: the server accepts only 272 tokens of context",
		"\n- **verdict**: capacity inconclusive (concurrency 1: few_samples",
		"\n**OBJECTIVE NOT MET at concurrency 8 (exit 3)**\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, md)
		}
	}
}

// run --objective --format csv carries the verdict in the one table: the
// objective, whether it holds (as the exit code says), the capacity, and
// per point pass and the failed SLOs; run --format markdown prints the
// Markdown verdict. (run adds the objective's target load, c=8.)
func TestRunObjectiveVerdictInCSVAndMarkdown(t *testing.T) {
	args := []string{"run", "--objective", "chat", "--concurrency", "1", "--requests", "3", "--output-tokens", "16"}
	code, out, stderr := run(t, append(args, "--format", "csv")...)
	// 4: a pass on 64 requests is too few for the chat objective's e2e p99
	holds := map[int]string{0: "true", 3: "false", 4: "false"}[code]
	if holds == "" {
		t.Fatalf("csv: exit %d, want 0, 3 or 4: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("csv: %v, %d rows, want a heading and the points c=1, c=8:\n%s", err, len(rows), out)
	}
	for _, r := range rows[1:] {
		got := map[string]string{}
		for i, h := range rows[0] {
			got[h] = r[i]
		}
		pass := got["slo_pass"]
		if got["objective"] != "chat" || got["objective_holds"] != holds || got["capacity"] == "" ||
			(pass != "true" && pass != "false") || (pass == "false") != (got["slo_failed"] != "" || got["slo_overloaded"] != "") {
			t.Errorf("csv verdict columns of c=%s: %v", got["concurrency"], got)
		}
	}
	code, out, stderr = run(t, append(args, "--format", "markdown")...)
	closing := map[int]string{0: "\n**OBJECTIVE HOLDS at concurrency 8**\n", 3: "\n**OBJECTIVE NOT MET at concurrency 8 (exit 3)**\n",
		4: "\n**OBJECTIVE INCONCLUSIVE at concurrency 8: "}[code]
	if closing == "" {
		t.Fatalf("markdown: exit %d, want 0, 3 or 4: %s", code, stderr)
	}
	for _, want := range []string{"\n### Objective chat · target load concurrency 8", "\n| c=1 | ", "\n| c=8 | ",
		"\n- **capacity**: ", "\n- **saturation**: ", "\n- **verdict**: ", closing} {
		if !strings.Contains(out, want) {
			t.Errorf("run --format markdown lacks %q:\n%s", want, out)
		}
	}
}
