package sweep

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/servebench/servebench/internal/launch"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/stats"
)

func f(v float64) *float64 { return &v }

// point is a load point of c users with throughput tps and per-user speed
// p50 and p5 (the speed 95% reached).
func point(c int, tps, p50, p5, e2e float64) metrics.PointSummary {
	return metrics.PointSummary{Load: record.Load{Concurrency: c}, OutputTPS: tps, LoadHeld: true,
		DecodeTPSReq: stats.Dist{P50: f(p50), P5: f(p5)}, E2E: stats.Dist{Mean: f(e2e)}}
}

func outcome(name, v string, pts ...metrics.PointSummary) Outcome {
	return Outcome{Config: launch.Config{Names: []string{name}, Values: map[string]string{name: v}},
		Summary: &metrics.Summary{Points: pts}}
}

func TestSummarizeFrontier(t *testing.T) {
	outs := []Outcome{
		// 2 slots: saturates at c=2
		outcome("seqs", "2", point(1, 100, 100, 90, 1000), point(2, 190, 95, 85, 1050), point(4, 200, 94, 40, 2000)),
		// 8 slots: more throughput, a little slower per user
		outcome("seqs", "8", point(1, 95, 99, 95, 1000), point(8, 700, 80, 70, 1200), point(16, 720, 79, 30, 2400)),
		{Config: launch.Config{Names: []string{"seqs"}, Values: map[string]string{"seqs": "32"}}, Error: "exited with status 1 before it was ready"},
	}
	got := Summarize(Spec{Serve: "s {port}"}, outs, nil, nil)
	if s := got.Configs[0].Saturation; s == nil || s.Concurrency != 2 {
		t.Errorf("seqs-2 saturation %v, want c=2", s)
	}
	if s := got.Configs[1].Saturation; s == nil || s.Concurrency != 8 {
		t.Errorf("seqs-8 saturation %v, want c=8", s)
	}
	if e := got.Configs[2].Error; e == nil || got.Configs[2].Points == nil {
		t.Errorf("the failed configuration: error %v, points %v", e, got.Configs[2].Points)
	}
	type on struct {
		config string
		c      int
		on     []string
	}
	var frontier []on
	for _, p := range got.Pareto {
		frontier = append(frontier, on{p.Config, p.Load.Concurrency, p.On})
	}
	want := []on{
		// the fastest per user at p95, but beaten at p50 by c=1 at 2 slots
		{"seqs-8", 1, []string{"p95"}},
		{"seqs-2", 1, []string{"p50", "p95"}},
		{"seqs-2", 2, []string{"p50", "p95"}},
		// faster at p50 than anything beyond it; at p95 c=8 at 8 slots beats it
		{"seqs-2", 4, []string{"p50"}},
		{"seqs-8", 8, []string{"p50", "p95"}},
		// the most throughput is always on it
		{"seqs-8", 16, []string{"p50", "p95"}},
	}
	if !reflect.DeepEqual(frontier, want) {
		t.Errorf("frontier\n got %v\nwant %v", frontier, want)
	}
}

func TestSummarizeFrontierPerGPU(t *testing.T) {
	outs := []Outcome{
		outcome("tp", "1", point(8, 400, 50, 40, 1000)),
		// twice the throughput on four times the GPUs: worse per GPU
		outcome("tp", "4", point(8, 800, 50, 40, 1000)),
	}
	gpus := func(c launch.Config) float64 { return map[string]float64{"1": 1, "4": 4}[c.Values["tp"]] }
	got := Summarize(Spec{}, outs, gpus, nil)
	if len(got.Pareto) != 1 || got.Pareto[0].Config != "tp-1" || !got.Pareto[0].PerGPU || got.Pareto[0].X != 400 {
		t.Errorf("per-GPU frontier %+v, want tp-1 alone at 400 tok/s per GPU", got.Pareto)
	}
	// without GPUs, tp=4 has more aggregate throughput at the same speed
	got = Summarize(Spec{}, outs, nil, nil)
	if len(got.Pareto) != 1 || got.Pareto[0].Config != "tp-4" || got.Pareto[0].PerGPU {
		t.Errorf("aggregate frontier %+v, want tp-4 alone", got.Pareto)
	}
}

func TestSummarizeStartups(t *testing.T) {
	o := Outcome{Config: launch.Config{Values: map[string]string{}}, Startups: []Startup{{ReadyS: f(3)}, {ReadyS: f(1)}, {ReadyS: f(2)}, {}}}
	got := Summarize(Spec{StartupOnly: true}, []Outcome{o}, nil, nil).Configs[0]
	if s := got.StartupSummary; s == nil || s.N != 4 || *s.ReadyS != (MinMedMax{1, 2, 3}) || s.FirstTokenS != nil {
		t.Errorf("startup summary %+v", s)
	}
	if got.Startup == nil || *got.Startup.ReadyS != 3 {
		t.Errorf("startup %+v, want the first", got.Startup)
	}
}

// TestPeakMemory: the recommendation ranks by GPU memory when every
// configuration measured has it, else by server RSS when every one has
// that, else by nothing; a failed configuration does not count.
func TestPeakMemory(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	failed := "never ready"
	for _, tc := range []struct {
		name    string
		configs []Config
		want    []float64
	}{
		{"GPU memory for all", []Config{{PeakGPUMemoryBytes: v(40), PeakServerRSSBytes: v(2)}, {PeakGPUMemoryBytes: v(30), PeakServerRSSBytes: v(3)}}, []float64{40, 30}},
		{"GPU memory for one: RSS", []Config{{PeakGPUMemoryBytes: v(40), PeakServerRSSBytes: v(2)}, {PeakServerRSSBytes: v(3)}}, []float64{2, 3}},
		{"a failed one does not count", []Config{{PeakServerRSSBytes: v(2)}, {Error: &failed}}, []float64{2, 0}},
		{"RSS for one only: none", []Config{{PeakServerRSSBytes: v(2)}, {}}, []float64{0, 0}},
	} {
		f := &File{Configs: tc.configs}
		mem := f.peakMemory()
		for i, c := range tc.configs {
			if got := mem(c); got != tc.want[i] {
				t.Errorf("%s: configuration %d: %v, want %v", tc.name, i, got, tc.want[i])
			}
		}
	}
}

// TestFailed: a configuration with an error is failed; a measured one
// whose objective does not hold is not.
func TestFailed(t *testing.T) {
	bad := outcome("np", "1")
	bad.Error = "exited at once"
	f := Summarize(Spec{}, []Outcome{bad, outcome("np", "2", point(1, 10, 5, 4, 1))}, nil, nil)
	if got := f.Failed(); got != 1 {
		t.Errorf("Failed = %d, want 1 of %d", got, len(f.Configs))
	}
}

// TestReadFindsRunsInItsDirectory: a sweep read back finds each
// configuration's run under its own directory, wherever the sweep ran
// from or was moved to; a failed configuration without a run keeps none;
// a file of another schema, or naming a directory outside, is refused.
func TestReadFindsRunsInItsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "moved")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if In(dir) {
		t.Error("In: an empty directory is a sweep's")
	}
	f := &File{Schema: Schema, Configs: []Config{{Name: "seqs-2", RunDir: "runs/sweep/seqs-2"}, {Name: "seqs-8"}}}
	if err := Write(dir, f); err != nil {
		t.Fatal(err)
	}
	if !In(dir) {
		t.Error("In: a directory with sweep.json is not a sweep's")
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "seqs-2"); got.Configs[0].RunDir != want {
		t.Errorf("run_dir %q, want %q", got.Configs[0].RunDir, want)
	}
	if got.Configs[1].RunDir != "" {
		t.Errorf("a configuration without a run: run_dir %q, want none", got.Configs[1].RunDir)
	}
	for _, bad := range []File{
		{Schema: "servebench.sweep/v9"},
		{Schema: Schema, Configs: []Config{{Name: "../elsewhere", RunDir: "runs/x"}}},
	} {
		if err := Write(dir, &bad); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(dir); err == nil {
			t.Errorf("%+v read without an error", bad)
		}
	}
}

// TestRejudge: a sweep judged again from its runs' verdicts is the sweep
// that would have been written had they been judged as it ran; the file
// judged again is left as it was.
func TestRejudge(t *testing.T) {
	outs := []Outcome{
		outcome("seqs", "2", point(1, 100, 100, 90, 1000), point(2, 190, 95, 85, 1050), point(4, 200, 94, 40, 2000)),
		outcome("seqs", "8", point(1, 95, 99, 95, 1000), point(8, 700, 80, 70, 1200), point(16, 720, 79, 30, 2400)),
		{Config: launch.Config{Names: []string{"seqs"}, Values: map[string]string{"seqs": "32"}}, Error: "exited with status 1 before it was ready"},
	}
	load := func(c int) *record.Load { return &record.Load{Concurrency: c} }
	judged := map[string]Judged{
		"seqs-2": {Verdict: &slo.Verdict{Holds: true, Conclusion: "holds",
			Capacity:   slo.Capacity{Found: true, Load: load(2), FailsAt: load(4), FailedSLOs: []string{"ttft p95"}},
			Saturation: slo.Saturation{Found: true, Load: load(2)}}},
		"seqs-8": {Verdict: &slo.Verdict{Holds: false, Conclusion: "not met",
			Capacity: slo.Capacity{Found: true, Load: load(1), FailsAt: load(8), FailedSLOs: []string{"ttft p95"}}},
			Server: map[record.ServerKey]string{record.ServerRuntime: "sim"}},
	}
	o := &slo.Objective{Name: "strict"}
	plain := Summarize(Spec{Serve: "s {port}"}, outs, nil, nil)
	// seqs-8's plan compared with its run, its speed taken at saturation
	pair := func(m float64) plan.ComparePoint {
		return plan.ComparePoint{DecodeTPS: plan.Pair{Measured: m, Predicted: 100}}
	}
	planned := &Plan{Compare: &plan.Comparison{Points: []plan.ComparePoint{pair(99), pair(80), pair(79)}}}
	planned.decodeAt(&plain.Configs[1])
	plain.Configs[1].Plan = planned
	if d := planned.DecodeAt; d == nil || d.Load.Concurrency != 8 {
		t.Fatalf("the plan's speed taken at %+v, want c=8 (saturation)", d)
	}
	got := plain.Rejudge(o, judged)
	if d := got.Configs[1].Plan.DecodeAt; d == nil || d.Load.Concurrency != 1 || d.DecodeTPS.Measured != 99 {
		t.Errorf("judged again, seqs-8's plan beside its speed at %+v, want c=1 (its capacity now)", d)
	}
	if planned.DecodeAt.Load.Concurrency != 8 {
		t.Errorf("the plan judged again was changed: %+v", planned.DecodeAt)
	}
	got.Configs[1].Plan = nil // Summarize below plans nothing
	for i := range outs[:2] {
		j := judged[outs[i].Config.Name()]
		outs[i].Verdict, outs[i].Server = j.Verdict, j.Server
	}
	want := Summarize(Spec{Serve: "s {port}"}, outs, nil, o)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("judged again:\n%+v\nas it ran:\n%+v", got, want)
	}
	if got.Recommended != "seqs-2" || got.Configs[0].DecodeAtCapacity == nil || got.Configs[0].DecodeAtCapacity.Load.Concurrency != 2 {
		t.Errorf("recommended %q (%s), seqs-2's speed at capacity %+v; want seqs-2 at c=2", got.Recommended, got.Why, got.Configs[0].DecodeAtCapacity)
	}
	if plain.Objective != "" || plain.Configs[0].Meets != nil || plain.Configs[0].Capacity != nil {
		t.Errorf("the file judged again was changed: %+v", plain.Configs[0])
	}
	// Judged again by an objective with no verdicts: nothing was measured.
	none := got.Rejudge(o, nil)
	if none.Recommended != "" || none.Configs[0].Meets != nil || none.Configs[0].Capacity != nil {
		t.Errorf("no verdicts: recommended %q, seqs-2 %+v", none.Recommended, none.Configs[0])
	}
}
