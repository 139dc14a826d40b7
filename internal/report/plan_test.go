package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/plan"
)

// planGolden reads a planner result plan pins as JSON into v and returns
// its bytes. Rendering it here keeps these tests on rendering, while a
// change to the planner shows in plan's golden and, through it, in
// report's.
func planGolden(t *testing.T, name string, v any) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "plan", "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// jsonSame says whether write prints exactly the JSON a result was read
// from, so plan --json prints what plan's golden holds.
func jsonSame(t *testing.T, name string, want []byte, write func(*bytes.Buffer) error) {
	t.Helper()
	var got bytes.Buffer
	if err := write(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%s: the JSON printed differs from the JSON read:\n%s", name, got.Bytes())
	}
}

func TestPlanGolden(t *testing.T) {
	for _, name := range []string{
		"worked-example",  // 4 users of Llama 3.1 8B on vLLM over the catalog
		"deepseek-v3-tp8", // an MLA MoE model in FP8 over eight H200s
	} {
		var r plan.Result
		js := planGolden(t, name+".json", &r)
		jsonSame(t, name+".json", js, func(w *bytes.Buffer) error { return PlanJSON(w, &r) })
		var got bytes.Buffer
		if err := Plan(&got, &r); err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("plan", name+".txt"), got.Bytes())
	}
}

// The simulator's run against the planner's prediction for it.
func TestPlanComparisonGolden(t *testing.T) {
	var c plan.Comparison
	js := planGolden(t, "compare.json", &c)
	jsonSame(t, "compare.json", js, func(w *bytes.Buffer) error { return PlanComparisonJSON(w, &c) })
	var got bytes.Buffer
	if err := PlanComparison(&got, &c); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("plan", "compare.txt"), got.Bytes())
}
