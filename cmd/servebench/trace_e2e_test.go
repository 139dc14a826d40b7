package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// The shipped traces (go generate ./internal/workload).
var traceFiles = filepath.Join("..", "..", "internal", "workload", "testdata", "traces")

// mooncakeTimes reads a Mooncake trace's timestamps (ms) and input
// lengths by line.
func mooncakeTimes(t *testing.T, path string) (ms []float64, in []int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v struct {
			Timestamp   float64 `json:"timestamp"`
			InputLength int     `json:"input_length"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		ms, in = append(ms, v.Timestamp), append(in, v.InputLength)
	}
	return ms, in
}

// traceRun reads a trace replay's records, run.json and summary.json.
func traceRun(t *testing.T, dir string) ([]record.Record, record.Run, metrics.Summary) {
	t.Helper()
	recs := cliRecords(t, filepath.Join(dir, "records.jsonl"))
	var run record.Run
	var sum metrics.Summary
	for name, v := range map[string]any{"run.json": &run, "summary.json": &sum} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	return recs, run, sum
}

// run --trace against the built-in simulator sends each line of the trace
// at its time divided by --trace-speed (model time: the simulator runs
// sped up), with the trace's prompt length, and reports the trace's shape
// beside what was sent.
func TestTraceReplayFollowsSchedule(t *testing.T) {
	path := filepath.Join(traceFiles, "mooncake.jsonl")
	ms, in := mooncakeTimes(t, path)
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := run(t, "run", "--trace", path, "--trace-speed", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	recs, rn, sum := traceRun(t, dir)
	if len(recs) != len(ms) {
		t.Fatalf("%d records, want one per line of the trace (%d)", len(recs), len(ms))
	}
	scale := rn.Scale()
	start := slices.MinFunc(recs, func(a, b record.Record) int { return int(a.ScheduledNS - b.ScheduledNS) }).ScheduledNS
	var errs []float64
	for _, r := range recs {
		i := r.TraceLine - 1
		want := time.Duration((ms[i] - ms[0]) / 2 * float64(time.Millisecond))
		sched := time.Duration(float64(r.ScheduledNS-start) * scale)
		sent := time.Duration(float64(r.SentNS-start) * scale)
		// scheduled is the trace's time, to the rounding of a sped-up clock
		if d := sched - want; d.Abs() > time.Millisecond {
			t.Errorf("line %d scheduled at %v, want %v", r.TraceLine, sched, want)
		}
		errs = append(errs, (sent - want).Seconds())
		if r.PromptTokensRequested != in[i] {
			t.Errorf("line %d asked for a %d-token prompt, the trace says %d", r.TraceLine, r.PromptTokensRequested, in[i])
		}
	}
	slices.Sort(errs)
	// model time: 10× the client's wall-clock lateness. A loaded machine
	// is late by milliseconds, not by the trace's gaps (hundreds of ms).
	if p50, worst := errs[len(errs)/2], errs[len(errs)-1]; p50 < 0 || p50 > 0.2 || worst > 2 {
		t.Errorf("sent − trace time: p50 %.3fs, max %.3fs (model time)", p50, worst)
	}
	tr := rn.Trace
	if tr == nil || tr.Requests != len(ms) || tr.Speed != 2 || tr.Format != record.TraceMooncake || tr.Reuse == nil || math.Abs(*tr.Reuse-0.62) > 0.01 {
		t.Fatalf("run.json trace: %+v", tr)
	}
	p := sum.Points[0]
	if p.Trace == nil || p.Trace.Replayed != 1 || p.Trace.ScheduleErrorMS.P99 == nil || len(p.Trace.Sent) < len(tr.Arrivals) {
		t.Fatalf("summary.json points[0].trace: %+v", p.Trace)
	}
	total := 0
	for _, n := range p.Trace.Sent {
		total += n
	}
	if total != len(ms) || sum.Run.Trace == nil {
		t.Errorf("sent per bin %v adds to %d, want %d", p.Trace.Sent, total, len(ms))
	}
	for _, w := range []string{"trace mooncake.jsonl (mooncake, 48 requests, ×2)", "Trace mooncake.jsonl (mooncake): 48 requests over 10.3 s, replayed at ×2", "reuse: 62.0% of prompt tokens"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	// report DIR reproduces the section from the files
	if code, rep, stderr := run(t, "report", dir); code != 0 || !strings.Contains(rep, "sent − scheduled ms p50/p99") {
		t.Errorf("report: exit %d\n%s%s", code, rep, stderr)
	}
}

// A window and a cap: --trace-start and --trace-max take the requests
// from 5 s on, the first of them at once; BurstGPT's labels are kept. A
// warm-up by time marks the first requests and the replay still ends
// with the window (the source's end is not an error).
func TestTraceReplayWindow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := run(t, "run", "--trace", filepath.Join(traceFiles, "burstgpt.csv"), "--trace-start", "5s", "--trace-max", "6",
		"--trace-speed", "4", "--warmup", "500ms", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	recs, rn, _ := traceRun(t, dir)
	var lines []int64
	for _, r := range recs {
		lines = append(lines, r.TraceLine)
	}
	slices.Sort(lines)
	// burstgpt.csv: the header, then whole seconds; 5 s is first reached
	// at line 15
	if want := []int64{15, 16, 17, 18, 19, 20}; !slices.Equal(lines, want) {
		t.Errorf("lines sent %v, want %v", lines, want)
	}
	warm := 0
	for _, r := range recs {
		if r.Phase == record.PhaseWarmup {
			warm++
		}
	}
	if warm == 0 || warm == len(recs) {
		t.Errorf("%d of %d requests warm-up, want the first ones", warm, len(recs))
	}
	if rn.Trace.Requests != 6 || rn.Trace.Labels["model=ChatGPT"]+rn.Trace.Labels["model=GPT-4"] != 6 {
		t.Errorf("run.json trace: %+v", rn.Trace)
	}
}

// Bad traces: each error names the file and line, exits 2 and sends
// nothing; rows with a zero length are left out and said so.
func TestTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// a 2 GB file of no lines at all (sparse: no disk is used): refused at
	// its first megabyte, never read whole
	huge := filepath.Join(dir, "huge.jsonl")
	if f, err := os.Create(huge); err != nil || f.Truncate(2<<30) != nil || f.Close() != nil {
		t.Fatal("cannot make a sparse 2 GB file")
	}
	mc := `{"timestamp": %s, "input_length": %s, "output_length": 8}` + "\n"
	line := func(ts, in string) string { return strings.Replace(strings.Replace(mc, "%s", ts, 1), "%s", in, 1) }
	unsorted := write("unsorted.jsonl", line("0", "100")+line("900", "100")+line("800", "100"))
	negative := write("negative.jsonl", line("-5", "100"))
	missing := write("missing.csv", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46.6805900,12\n")
	long := filepath.Join(traceFiles, "mooncake.jsonl")
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--trace", unsorted}, []string{"Error: --trace " + unsorted + ":3: timestamp 800ms is before the previous request's (900ms): the trace must be sorted by time"}},
		{[]string{"--trace", negative}, []string{"Error: --trace " + negative + ":1: negative timestamp (-5ms)"}},
		{[]string{"--trace", missing}, []string{"Error: --trace " + missing + `:1: missing column "GeneratedTokens"`}},
		{[]string{"--trace", huge}, []string{"Error: --trace " + huge + `:1: cannot tell the trace's format from its first line "\x00\x00`}},
		{[]string{"--trace", huge, "--trace-format", "mooncake"}, []string{"Error: --trace " + huge + ":1: line longer than 1048576 bytes"}},
		{[]string{"--trace", long, "--context-tokens", "4096"}, []string{"Error: --trace: " + long + ":44: a request of 5093 tokens (prompt + output) does not fit the model's context of 4096"}},
		{[]string{"--trace", long, "--trace-format", "csv"}, []string{`Error: --trace-format: "csv": want mooncake, azure or burstgpt`}},
		{[]string{"--trace", long, "--rate", "2"}, []string{"Error: --rate cannot be used with --trace"}},
		{[]string{"--trace", long, "--trace-speed", "0"}, []string{"Error: --trace-speed 0: must be a positive number"}},
		{[]string{"--trace", filepath.Join(dir, "nope.jsonl")}, []string{"Error: --trace: open " + filepath.Join(dir, "nope.jsonl")}},
	}
	for _, tt := range tests {
		out := filepath.Join(dir, "out")
		start := time.Now()
		code, stdout, stderr := run(t, append(append([]string{"run"}, tt.args...), "--out", out)...)
		if code != 2 || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q; want 2 and nothing", tt.args, code, stdout)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr %q lacks %q", tt.args, stderr, w)
			}
		}
		if _, err := os.Stat(filepath.Join(out, "records.jsonl")); err == nil {
			t.Errorf("%q: records written", tt.args)
			os.RemoveAll(out)
		}
		if tt.args[1] == huge && time.Since(start) > 20*time.Second {
			t.Errorf("the 2 GB file took %v to refuse: read whole?", time.Since(start))
		}
	}
	// zero lengths: left out, counted, and the rest replayed
	zero := write("zero.jsonl", line("0", "0")+line("100", "100")+line("200", "90"))
	out := filepath.Join(dir, "zero")
	code, stdout, stderr := run(t, "run", "--trace", zero, "--out", out)
	if code != 0 || !strings.Contains(stdout, "1 rows with a zero length left out (the first at line 1)") {
		t.Errorf("zero lengths: exit %d\n%s%s", code, stdout, stderr)
	}
}

// An objective judges a replay: the trace's rate is the load, a target
// above it replays the trace that much faster (every offset scaled), and
// an SLO that cannot hold exits 3.
func TestTraceJudged(t *testing.T) {
	path := filepath.Join(traceFiles, "mooncake.jsonl")
	ms, _ := mooncakeTimes(t, path)
	dir := filepath.Join(t.TempDir(), "r")
	const target = 16.0
	// The simulator at time scale 2, not its default 10: a host too busy
	// to keep its clock makes the trace's point, rightly, no capacity
	// evidence (sim_behind), and the capacity line this test reads absent.
	simCfg := filepath.Join(t.TempDir(), "sim.yaml")
	if err := os.WriteFile(simCfg, []byte("time_scale: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "run", "--trace", path, "--trace-max", "24", "--trace-speed", "4",
		"--slo", "ttft p95 <= 60s", "--target-load", "16", "--sim-config", simCfg, "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	recs, rn, sum := traceRun(t, dir)
	nominal := rn.Trace.NominalRate()
	if len(sum.Points) != 2 || sum.Points[0].Load.Rate != nominal || sum.Points[1].Load.Rate != target {
		t.Fatalf("points %v, want the trace's rate %v then the target %v", loadsOf(sum.Points), nominal, target)
	}
	k := target / nominal
	if p := sum.Points[1]; p.Trace == nil || math.Abs(p.Trace.Scale-k) > 1e-9 || sum.Points[0].Trace.Scale != 0 {
		t.Errorf("points[].trace.scale: %+v, %+v; want absent, then %v", sum.Points[0].Trace, p.Trace, k)
	}
	starts := map[int]int64{}
	for _, r := range recs {
		if s, ok := starts[r.Point]; !ok || r.ScheduledNS < s {
			starts[r.Point] = r.ScheduledNS
		}
	}
	n := 0
	for _, r := range recs {
		if r.Load.Rate != target {
			continue
		}
		n++
		want := time.Duration((ms[r.TraceLine-1] - ms[0]) / 4 / k * float64(time.Millisecond))
		if d := time.Duration(float64(r.ScheduledNS-starts[r.Point])*rn.Scale()) - want; d.Abs() > time.Millisecond {
			t.Errorf("line %d at the target scheduled %v off the trace's time ÷ %.3g", r.TraceLine, d, 4*k)
		}
	}
	if n != 24 {
		t.Errorf("%d requests at the target, want the 24 of the window", n)
	}
	for _, w := range []string{"Objective command-line · target load 16 req/s", "OBJECTIVE HOLDS at 16 req/s", "r=16/s, ×" + strconv.FormatFloat(k, 'g', 3, 64) + " the trace's rate (replayed at ×",
		// ×k, or ×1 where a loaded machine did not hold the target's 32 wall-clock req/s
		"trace       capacity at ×", " the trace's rate ("} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	// report judges the recorded replay as run judged it: its capacity
	// said against the trace's rate too
	code, stdout, stderr = run(t, "report", "--slo", "ttft p95 <= 60s", "--target-load", "16", dir)
	if code != 0 || !strings.Contains(stdout, "trace       capacity at ×") || !strings.Contains(stdout, " the trace's rate (") {
		t.Errorf("report --slo of the replay: exit %d, want 0 and capacity against the trace's rate\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "run", "--trace", path, "--trace-max", "12", "--trace-speed", "4", "--slo", "ttft p95 <= 1ms")
	if code != 3 || !strings.Contains(stdout, "OBJECTIVE NOT MET at ") || !strings.Contains(stdout, "req/s (exit 3)") {
		t.Errorf("an SLO no replay meets: exit %d, want 3\n%s", code, stdout)
	}
}

func loadsOf(ps []metrics.PointSummary) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Load.Label())
	}
	return out
}
