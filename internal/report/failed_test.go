package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// failedFixture is a run whose c=1 completed and whose c=4 failed
// entirely: three connection failures, the first of them (lowest id)
// the sample shown, and a 4xx.
func failedFixture() (*metrics.Summary, *slo.Evaluator) {
	var a metrics.Aggregator
	ev := &slo.Evaluator{}
	add := func(r *record.Record) { a.Add(r); ev.Add(r) }
	for id := range int64(2) {
		r := rec(0, 1, id, id*400, 100, 20, 11)
		add(r)
	}
	fail := func(id int64, class, msg string) {
		add(&record.Record{Schema: record.Schema, Point: 1, Load: record.Load{Concurrency: 4}, ID: id,
			Phase: record.PhaseMeasured, API: "openai-chat", SentNS: id * msNS, ScheduledNS: id * msNS, EndNS: (id + 1) * msNS,
			Error: &record.Error{Class: class, Message: msg}})
	}
	fail(12, record.ClassConnect, "dial tcp 127.0.0.1:9: connect: connection refused (later)")
	fail(10, record.ClassConnect, "dial tcp 127.0.0.1:9: connect: connection refused")
	fail(11, record.ClassConnect, "dial tcp 127.0.0.1:9: connect: connection refused (again)")
	fail(13, record.ClassHTTP4xx, `HTTP 404: {"error":"model \"m\" not found"}`)
	run := &record.Run{Schema: record.RunSchema, Version: "test", Started: "2026-01-02T03:04:05Z",
		Target:       record.Target{URL: "http://127.0.0.1:9", API: "openai-chat", Model: "m"},
		PromptTokens: "512", OutputTokens: "11", Seed: 1}
	return metrics.Summarize(run, &a), ev
}

// TestAllFailedMarkedInEveryFormat: a point where every request failed
// says so in every output format, and the text and Markdown list the
// errors by class with a count and one sample message.
func TestAllFailedMarkedInEveryFormat(t *testing.T) {
	marks := map[string][]string{
		"text":     {"4 (ALL FAILED)", "connect 3 (c=4: 3), e.g. \"dial tcp 127.0.0.1:9: connect: connection refused\"", "http_4xx 1 (c=4: 1)", "c=4: every request failed (connect 3, http_4xx 1)"},
		"markdown": {"4 (ALL FAILED)", "- connect 3 (c=4: 3), e.g.", "every request failed"},
		"csv":      {",true,connect:3;http_4xx:1,"},
		"json":     {`"all_failed": true`, `"connect": "dial tcp 127.0.0.1:9: connect: connection refused"`},
	}
	for name, r := range Formats {
		s, _ := failedFixture()
		var buf bytes.Buffer
		if err := r(&buf, s); err != nil {
			t.Fatal(err)
		}
		for _, m := range marks[name] {
			if !strings.Contains(buf.String(), m) {
				t.Errorf("%s output lacks %q:\n%s", name, m, buf.String())
			}
		}
		golden(t, "allfailed."+name+".golden", buf.Bytes())
	}
}

// TestFailingIsNotOverloaded: a load whose requests fail on connect is
// marked failing and all-failed in the verdict, never overloaded.
func TestFailingIsNotOverloaded(t *testing.T) {
	s, ev := failedFixture()
	o := &slo.Objective{Name: "demo"}
	for _, e := range []string{"ttft p95 <= 1s", "error_rate <= 1%"} {
		x, err := slo.Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		o.SetSLO(x)
	}
	o.Load.Concurrency, o.Load.Target = []int{1, 4}, 4
	v := slo.Judge(o, ev.Evaluate(o.Checks(), slo.Options{Seed: 1}), nil, nil)
	var buf bytes.Buffer
	if err := Verdict(&buf, o, v); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"FAIL (failing, all failed)", "SERVER FAILING at concurrency 4", "failing at concurrency 4, not overloaded: 4 of 4 requests failed (connect 3, http_4xx 1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("verdict lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "overload") && !strings.Contains(out, "not overloaded") {
		t.Errorf("a connect failure is called overload:\n%s", out)
	}
	pv := v.Points[1]
	if !pv.AllFailed || pv.Failing == "" || pv.Overloaded != "" || pv.Pass {
		t.Errorf("c=4 verdict %+v", pv)
	}
	golden(t, "allfailed.verdict.golden", buf.Bytes())
	_ = s
}
