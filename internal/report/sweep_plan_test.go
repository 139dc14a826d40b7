package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sweep"
)

// plannedSweep is sampleSweep with each configuration planned: one beside
// its GPU memory, one beside its server's RSS, one whose plan failed.
func plannedSweep() *sweep.File {
	f := sampleSweep()
	f.PlanConfig = "models/Llama-3.1-8B"
	v := func(x float64) *float64 { return &x }
	gib := float64(1 << 30)
	f.Configs[0].PeakGPUMemoryBytes = v(36 * gib)
	f.Configs[1].PeakServerRSSBytes = v(0.5 * gib)
	mem := func(perGPU float64, gpus int) *sweep.PlannedMemory {
		return &sweep.PlannedMemory{PerGPUBytes: int64(perGPU * gib), UsableBytes: int64(79 * gib), Fits: true,
			Parts: plan.Budget{GPUs: gpus, Weights: int64(15 * gib / float64(gpus)), Total: int64(perGPU * gib)}}
	}
	compare := func(measured float64) *plan.Comparison {
		return &plan.Comparison{Schema: plan.CompareSchema, Model: "Llama-3.1-8B", Device: "H100-SXM", Engine: "vLLM", GPUs: 1,
			Points: []plan.ComparePoint{{Load: "c=1", Concurrency: 1, PromptTokens: 512, OutputTokens: 128, Completed: 100,
				DecodeTPS: plan.Pair{Measured: measured, Predicted: 120, Ratio: measured / 120}}}}
	}
	f.Configs[0].Plan = &sweep.Plan{Device: "H100-SXM", Engine: "vLLM", GPUs: 2, Args: []string{"--gpu", "H100-SXM", "--tp", "2"},
		Workload: plan.Workload{PromptTokens: 512, OutputTokens: 128, Concurrency: 2}, Memory: mem(18, 2),
		PeakMemory: &sweep.MeasuredMemory{Bytes: 36 * gib, Source: sweep.MemoryGPU, Ratio: v(1)}, DecodeTPS: v(120),
		DecodeAt: &sweep.DecodeAt{Load: record.Load{Concurrency: 1}, DecodeTPS: plan.Pair{Measured: 100, Predicted: 120, Ratio: 0.833333}},
		Compare:  compare(100), Warnings: []string{}}
	f.Configs[1].Plan = &sweep.Plan{Device: "H100-SXM", Engine: "vLLM", GPUs: 1, Args: []string{"--gpu", "H100-SXM", "--tp", "1"},
		Workload: plan.Workload{PromptTokens: 512, OutputTokens: 128, Concurrency: 8}, Memory: mem(20, 1),
		PeakMemory: &sweep.MeasuredMemory{Bytes: 0.5 * gib, Source: sweep.MemoryServerRSS}, DecodeTPS: v(118),
		DecodeAt: &sweep.DecodeAt{Load: record.Load{Concurrency: 8}, DecodeTPS: plan.Pair{Measured: 80, Predicted: 118, Ratio: 0.677966}},
		Compare:  compare(99), Warnings: []string{"the simulator is one device"}}
	failed := "context length 200000 exceeds the model's maximum 131072"
	f.Configs[2].Plan = &sweep.Plan{Device: "H100-SXM", Args: []string{"--gpu", "H100-SXM", "--context", "200000"},
		Workload: plan.Workload{PromptTokens: 512, OutputTokens: 128, Concurrency: 32}, Warnings: []string{}, Error: &failed}
	return f
}

// TestSweepPlanGolden: the text, Markdown and JSON of a sweep whose
// configurations were planned (testdata/sweep_plan.*.golden).
func TestSweepPlanGolden(t *testing.T) {
	for format, render := range map[string]func(io.Writer, *sweep.File) error{
		"text": Sweep, "markdown": SweepMarkdown, "json": SweepJSON,
	} {
		var b bytes.Buffer
		if err := render(&b, plannedSweep()); err != nil {
			t.Fatal(err)
		}
		golden(t, "sweep_plan."+format+".golden", b.Bytes())
	}
}

// TestSweepPlanTable: each planned configuration's row sets the planned
// memory per GPU beside the measured peak, and the planned decode speed
// beside the measured one at its load, with their ratios; a failed plan
// says why. A sweep with no plan has no such table.
func TestSweepPlanTable(t *testing.T) {
	rows, notes := planTable(plannedSweep())
	want := [][]string{
		{"seqs-2", "H100-SXM", "2", "18.00 GiB", "36.00 GiB GPU", "1.00", "c=1", "120.0", "100.0", "0.83"},
		{"seqs-8", "H100-SXM", "1", "20.00 GiB", "0.50 GiB RSS", "-", "c=8", "118.0", "80.0", "0.68"},
		{"seqs-32", "H100-SXM", "-", "-", "-", "-", "-", "-", "-", "-"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %q", len(rows), len(want), rows)
	}
	for i := range want {
		if strings.Join(rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d: got %q, want %q", i, rows[i], want[i])
		}
	}
	if !strings.Contains(strings.Join(notes, "\n"), "seqs-32: the plan failed: context length 200000") {
		t.Errorf("notes %q lack the failed plan", notes)
	}
	var b strings.Builder
	if err := Sweep(&b, sampleSweep()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), planTitle) {
		t.Errorf("a sweep with no plan has the plan's table:\n%s", b.String())
	}
}

// TestSweepPagePlanTable: the sweep's page carries the same table, with
// its notes.
func TestSweepPagePlanTable(t *testing.T) {
	dir := t.TempDir()
	f := plannedSweep()
	for i := range f.Configs {
		f.Configs[i].RunDir = filepath.Join(dir, "none") // no run to draw
	}
	if err := WriteSweepPage(dir, f); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`"title":"Planned beside measured"`,
		`["seqs-2","H100-SXM","2","18.00 GiB","36.00 GiB GPU","1.00","c=1","120.0","100.0","0.83"]`,
		`seqs-32: the plan failed: context length 200000`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %s", want)
		}
	}
	dir = t.TempDir()
	f = sampleSweep()
	for i := range f.Configs {
		f.Configs[i].RunDir = filepath.Join(dir, "none")
	}
	if err := WriteSweepPage(dir, f); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "report.html")); bytes.Contains(b, []byte(planTitle)) {
		t.Error("a sweep with no plan has the plan's table on its page")
	}
}

// TestSweepPageNoRunDir: a configuration whose run directory is not
// named is left off the page, not read from standard input.
func TestSweepPageNoRunDir(t *testing.T) {
	dir := t.TempDir()
	f := sampleSweep()
	for i := range f.Configs {
		f.Configs[i].RunDir = ""
	}
	if err := WriteSweepPage(dir, f); err != nil {
		t.Fatal(err)
	}
}
