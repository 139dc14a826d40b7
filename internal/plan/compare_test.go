package plan

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestCompare predicts the load points of a run against servebench's
// simulator (configured as an 8B model on an H100, time scale 1) and sets
// the measurements beside the predictions.
func TestCompare(t *testing.T) {
	b, err := os.ReadFile("testdata/runs/sim-llama-8b-h100/summary.json")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ParseSummary(b)
	if err != nil {
		t.Fatal(err)
	}
	d := device(t, "H100-SXM")
	c, err := Compare(loadModel(t, "Llama-3.1-8B"), defaultOptions(EngineVLLM), &d, sum)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Points) != 2 || c.RunModel != "sim-llama-3.1-8b" {
		t.Fatalf("%d points, run model %q", len(c.Points), c.RunModel)
	}
	one, four := c.Points[0], c.Points[1]
	// c=1: a bandwidth-bound decode within 30% of the roofline.
	if one.Limit != "memory bandwidth" || one.DecodeTPS.Ratio < 0.7 || one.DecodeTPS.Ratio > 1.3 {
		t.Errorf("c=1: %s, decode ratio %.2f", one.Limit, one.DecodeTPS.Ratio)
	}
	// c=4: equal-length users arrive together; TTFT p95 is the burst of
	// four 4,000-token prefills.
	if four.Limit != "compute" || !approx(four.TTFTBurst.Ratio, 1, 0.25) || four.PromptTokens != 4000 || four.OutputTokens != 300 {
		t.Errorf("c=4: %s, burst ratio %.2f, %d/%d tokens", four.Limit, four.TTFTBurst.Ratio, four.PromptTokens, four.OutputTokens)
	}
	golden(t, "compare.json", mustJSON(t, c))
}

// TestCompareRules checks the limit each kind of measurement suggests.
func TestCompareRules(t *testing.T) {
	s := loadModel(t, "Llama-3.1-8B")
	d := device(t, "H100-SXM")
	base := func() SummaryPoint {
		var pt SummaryPoint
		pt.Load.Concurrency = 1
		pt.PromptTokensMean, pt.OutputTokensMean = 1000, 200
		return pt
	}
	tests := []struct {
		name  string
		edit  func(*SummaryPoint)
		limit string
	}{
		{"slow decode", func(p *SummaryPoint) { p.DecodeTPS.P50 = 20; p.TTFT.P50 = 40 }, "CPU"},
		{"queueing", func(p *SummaryPoint) { p.Queue.P50 = 900; p.E2E.P50 = 3000; p.DecodeTPS.P50 = 100 }, "memory capacity"},
		{"too many users", func(p *SummaryPoint) { p.Load.Concurrency = 500; p.PromptTokensMean = 100000 }, "memory capacity"},
		{"on the roofline", func(p *SummaryPoint) { p.DecodeTPS.P50 = 140; p.TTFT.P50 = 40 }, "memory bandwidth"},
		{"open loop by Little's law", func(p *SummaryPoint) {
			p.Load.Concurrency, p.Load.Rate, p.E2E.Mean, p.DecodeTPS.P50 = 0, 2, 1500, 140
		}, "memory bandwidth"},
	}
	for _, tt := range tests {
		pt := base()
		tt.edit(&pt)
		cp, err := comparePoint(s, defaultOptions(EngineVLLM), &d, pt)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if cp.Limit != tt.limit {
			t.Errorf("%s: limit %q (%s), want %q", tt.name, cp.Limit, cp.Why, tt.limit)
		}
	}
}

// TestParseSummaryErrors checks the summary reader's errors.
func TestParseSummaryErrors(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"not json", "{", "summary.json"},
		{"wrong schema", `{"schema": "servebench.summary/v9", "points": []}`, `schema "servebench.summary/v9"`},
		{"no points", `{"schema": "servebench.summary/v1", "points": []}`, "no points"},
		{"no load", `{"schema": "servebench.summary/v1", "points": [{"load": {}}]}`, "point 1 has neither"},
	}
	for _, tt := range tests {
		_, err := ParseSummary([]byte(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestLegacySimSummaryInModelTime: a simulator summary from before
// summaries were in model time (time_scale only in target.server) is
// converted; one that records run.time_scale is already in model time.
func TestLegacySimSummaryInModelTime(t *testing.T) {
	const body = `{"schema":"servebench.summary/v1","run":{%s"target":{"server":{"time_scale":"10"}}},
	  "points":[{"load":{"concurrency":1},"ttft_ms":{"mean":2,"p50":2,"p95":3},"tpot_ms":{"mean":0.65},
	  "decode_tps_per_request":{"p50":1540},"output_tps":1500,"prompt_tokens_mean":512,"output_tokens_mean":128}]}`
	legacy, err := ParseSummary(fmt.Appendf(nil, body, ""))
	if err != nil {
		t.Fatal(err)
	}
	p := legacy.Points[0]
	if p.TTFT.P50 != 20 || p.TTFT.P95 != 30 || p.TPOT.Mean != 6.5 || p.DecodeTPS.P50 != 154 || p.OutputTPS != 150 || len(legacy.Warnings) != 1 {
		t.Errorf("legacy summary not converted to model time: %+v %v", p, legacy.Warnings)
	}
	current, err := ParseSummary(fmt.Appendf(nil, body, `"time_scale":10,`))
	if err != nil {
		t.Fatal(err)
	}
	if q := current.Points[0]; q.TTFT.P50 != 2 || q.DecodeTPS.P50 != 1540 || len(current.Warnings) != 0 {
		t.Errorf("a model-time summary was converted again: %+v", q)
	}
}

// TestComparePeakMemoryFromTelemetry: a run that sampled its GPUs gives
// the comparison its measured peak memory, the busiest GPU's (the plan is
// per device); one without GPU telemetry leaves it out.
func TestComparePeakMemoryFromTelemetry(t *testing.T) {
	const body = `{"schema":"servebench.summary/v1","run":{"time_scale":1},
	  "points":[{"load":{"concurrency":1},"ttft_ms":{"mean":20,"p50":20,"p95":30},"tpot_ms":{"mean":7},
	  "decode_tps_per_request":{"p50":140},"output_tps":140,"prompt_tokens_mean":512,"output_tokens_mean":128%s}]}`
	tests := []struct {
		name, telemetry string
		want            float64
	}{
		{"two GPUs", `,"telemetry":{"gpus":[{"index":0,"memory_used_bytes_max":70e9},{"index":1,"memory_used_bytes_max":71e9}]}`, 71e9},
		{"server only", `,"telemetry":{"server":{"running":{"mean":1,"max":1}}}`, 0},
		{"no telemetry", ``, 0},
	}
	d := device(t, "H100-SXM")
	for _, tc := range tests {
		sum, err := ParseSummary(fmt.Appendf(nil, body, tc.telemetry))
		if err != nil {
			t.Fatal(err)
		}
		c, err := Compare(loadModel(t, "Llama-3.1-8B"), defaultOptions(EngineVLLM), &d, sum)
		if err != nil {
			t.Fatal(err)
		}
		pm := c.Points[0].PeakMemory
		switch {
		case tc.want == 0 && pm != nil:
			t.Errorf("%s: peak memory %+v, want none", tc.name, pm)
		case tc.want > 0 && (pm == nil || pm.Measured != tc.want || pm.Predicted <= 0):
			t.Errorf("%s: peak memory %+v, want measured %g beside a prediction", tc.name, pm, tc.want)
		}
	}
}
