package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/store"
)

// behindFixture is the verdict fixture's sweep (c=1..4 meet the objective,
// c=8 does not) where the simulator fell behind its clock at c=4, the
// target load: its summary points carry sim_behind.
func behindFixture(t *testing.T) (*slo.Objective, *slo.Report) {
	t.Helper()
	o, err := slo.ParseObjective([]byte(verdictObjective))
	if err != nil {
		t.Fatal(err)
	}
	var ev slo.Evaluator
	var agg metrics.Aggregator
	point, id := 0, int64(0)
	for _, c := range []int{1, 2, 4, 8} {
		for i := range 20 {
			inFlight := min(c, 4)
			ttft, gap := int64(100+(10*i)%50), int64(20+inFlight)
			if c == 8 {
				ttft, gap = 200+int64(30*i), 24
			}
			r := rec(point, c, id, int64(i/inFlight)*400, ttft, gap, 11)
			ev.Add(r)
			agg.Add(r)
			id++
		}
		point++
	}
	s := metrics.Summarize(nil, &agg)
	s.Points[2].Validity.Add(metrics.Reason{Code: metrics.InvalidSimBehind, Text: "skipped 30% of the point's model time"})
	ev.Qualify(s.Points)
	v := slo.Judge(o, ev.Evaluate(o.Checks(), slo.Options{}), nil, map[record.ServerKey]string{record.ServerMaxModelLen: "131072"})
	return o, &slo.Report{Summary: s, Objective: o, Verdict: v}
}

// An objective judged on a point whose simulator fell behind is
// INCONCLUSIVE in every format, the reason next to the word; capacity and
// saturation are not claimed from that point.
func TestInconclusiveInEveryFormat(t *testing.T) {
	o, rep := behindFixture(t)
	v := rep.Verdict
	if v.Holds || !v.Inconclusive || v.Conclusion != slo.ConclusionInconclusive {
		t.Fatalf("holds %v inconclusive %v conclusion %q", v.Holds, v.Inconclusive, v.Conclusion)
	}
	const why = "sim_behind: skipped 30% of the point's model time"
	if c := v.Capacity; !c.Found || c.Load.Concurrency != 2 || c.BoundedBy != slo.BoundedByInvalid || !strings.Contains(c.Invalid, why) {
		t.Errorf("capacity %+v: want at least c=2, inconclusive beyond", c)
	}
	if s := v.Saturation; s.Found || !strings.HasPrefix(s.Inconclusive, "concurrency 4: "+why) || s.MaxThroughputLoad.Concurrency != 2 {
		t.Errorf("saturation %+v: want none claimed at or beyond c=4", s)
	}

	var text, md, js bytes.Buffer
	if err := Verdict(&text, o, v); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"INCONCLUSIVE (sim_behind)", "inconclusive    c=4: " + why,
		"capacity        at least concurrency 2; INCONCLUSIVE beyond it (concurrency 4: " + why + ")",
		"saturation      INCONCLUSIVE: not reached below concurrency 4: " + why,
		"INCONCLUSIVE at the target load, concurrency 4: " + why + "\n",
		"\nOBJECTIVE INCONCLUSIVE at concurrency 4: " + why + " (exit 4)\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "HOLDS") || strings.Contains(text.String(), "NOT MET") {
		t.Errorf("text concludes:\n%s", text.String())
	}
	if err := VerdictMarkdown(&md, o, v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "**OBJECTIVE INCONCLUSIVE at concurrency 4: "+why+" (exit 4)**") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := ObjectiveJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Points []struct {
			Validity struct {
				Valid   bool
				Reasons []struct{ Code, Text string }
			}
		}
		Verdict struct {
			Holds, Inconclusive bool
			Conclusion          string
			Reasons             []string
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if p := doc.Points[2].Validity; p.Valid || len(p.Reasons) != 1 || p.Reasons[0].Code != "sim_behind" || !doc.Points[0].Validity.Valid {
		t.Errorf("points[].validity %+v", doc.Points)
	}
	// the page's verdict card: INCONCLUSIVE with the reasons beside it
	if h := buildVerdict(o, v); !h.Inconclusive || h.Holds || !strings.Contains(h.Capacity, "INCONCLUSIVE beyond it") ||
		!strings.HasPrefix(h.Saturation, "INCONCLUSIVE") || len(h.Reasons) != 1 {
		t.Errorf("html verdict %+v", h)
	}
	if d := doc.Verdict; d.Holds || !d.Inconclusive || d.Conclusion != "inconclusive" || len(d.Reasons) != 1 || !strings.Contains(d.Reasons[0], why) {
		t.Errorf("verdict %+v", d)
	}
}

// The history says INCONCLUSIVE for such a run and for its load.
func TestHistoryInconclusive(t *testing.T) {
	_, rep := behindFixture(t)
	f := false
	var pts []store.Point
	for _, pv := range rep.Verdict.Points {
		b, _ := json.Marshal(pv)
		pass := pv.Pass
		pts = append(pts, store.Point{Label: pv.Load.Label(), Pass: &pass, Verdict: b})
	}
	d := &store.Detail{Run: store.Run{ObjectiveName: "demo", Holds: &f, Conclusion: rep.Verdict.Conclusion, Verdict: rep.Verdict.Text, Points: pts}}
	var b bytes.Buffer
	if err := HistoryRun(&b, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "objective demo: INCONCLUSIVE") {
		t.Errorf("history show:\n%s", b.String())
	}
	rows := historyRows(pts)
	if got := rows[4][len(rows[4])-1]; got != "INCONCLUSIVE" {
		t.Errorf("c=4 row verdict %q, want INCONCLUSIVE: %q", got, rows)
	}
	if got := rows[2][len(rows[2])-1]; got != "pass" {
		t.Errorf("c=1 row verdict %q", got)
	}
}
