package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/servebench/servebench/internal/plan"
)

// planGolden is where plan pins a planner result as JSON; rendering it
// here keeps these tests on rendering while a change to the planner shows
// in plan's golden and, through it, in report's.
func planGolden(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "plan", "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestPlanGolden(t *testing.T) {
	for _, name := range []string{
		"worked-example",  // 4 users of Llama 3.1 8B on vLLM over the catalog
		"deepseek-v3-tp8", // an MLA MoE model in FP8 over eight H200s
	} {
		var r plan.Result
		planGolden(t, name+".json", &r)
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
	planGolden(t, "compare.json", &c)
	var got bytes.Buffer
	if err := PlanComparison(&got, &c); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("plan", "compare.txt"), got.Bytes())
}
