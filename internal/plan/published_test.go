package plan

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// published is testdata/published.yaml: measurements with their citations.
type published struct {
	Sources map[string]map[string]string `yaml:"sources"`
	Cases   []publishedCase              `yaml:"cases"`
}

type publishedCase struct {
	Source      string             `yaml:"source"`
	Model       string             `yaml:"model"`
	Engine      string             `yaml:"engine"`
	Weights     string             `yaml:"weights"`
	KV          string             `yaml:"kv"`
	GPU         string             `yaml:"gpu"`
	TP          int                `yaml:"tp"`
	Utilization float64            `yaml:"utilization"`
	Prompt      int                `yaml:"prompt"`
	Output      int                `yaml:"output"`
	Concurrency int                `yaml:"concurrency"`
	Measured    map[string]float64 `yaml:"measured"`
}

// publishedGoals are the accuracy goals: the median over a kind of
// |published / predicted - 1| must not exceed them.
var publishedGoals = map[string]float64{
	"kv_tokens": 0.03, "kv_gib": 0.03, "output_tps": 0.05, "decode_tps": 0.05, "ttft_ms": 0.25,
	"prefill_tps": 0.20,
}

func readPublished(t *testing.T) published {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "published.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p published
	if err := yaml.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// predict plans one published configuration and returns the plan's figure
// for each kind the case measured.
func (c publishedCase) predict(t *testing.T) map[string]float64 {
	t.Helper()
	o := defaultOptions(c.Engine)
	o.Weights, o.KVType, o.GPUs = c.Weights, c.KV, max(1, c.TP)
	if c.Utilization > 0 {
		o.Headroom = 1 - c.Utilization
	}
	w := Workload{PromptTokens: c.Prompt, OutputTokens: c.Output, Concurrency: c.Concurrency}
	r, err := Plan(loadModel(t, c.Model), w, o, []Device{device(t, c.GPU)})
	if err != nil {
		t.Fatalf("%s %s: %v", c.Source, c.Model, err)
	}
	d := r.Devices[0]
	return map[string]float64{
		"kv_tokens": float64(d.KVPool), "kv_gib": float64(d.KVPool*d.Budget.KVPerToken) / gib,
		"output_tps": d.Perf.AggregateTPS, "decode_tps": d.Perf.DecodeTPS, "ttft_ms": 1000 * d.Perf.TTFTP50S,
		"prefill_tps": float64(c.Prompt) / d.Perf.PrefillS,
	}
}

// TestPublishedMeasurements holds the planner against published
// measurements (testdata/published.yaml): per kind, the median of
// |published / predicted - 1| must meet the goal. The table of every
// comparison is in the test log (go test -run Published -v).
func TestPublishedMeasurements(t *testing.T) {
	p := readPublished(t)
	errs := map[string][]float64{}
	var table strings.Builder
	fmt.Fprintf(&table, "%-28s %-22s %-7s %5s %-10s %12s %12s %8s\n", "SOURCE", "MODEL", "ENGINE", "USERS", "KIND", "PUBLISHED", "PREDICTED", "ERROR")
	for _, c := range p.Cases {
		if _, ok := p.Sources[c.Source]; !ok {
			t.Fatalf("case cites unknown source %q", c.Source)
		}
		pred := c.predict(t)
		for _, kind := range sortedKeys(c.Measured) {
			want, got := c.Measured[kind], pred[kind]
			if _, ok := publishedGoals[kind]; !ok || !(got > 0) {
				t.Fatalf("%s %s: kind %q has no prediction (%v)", c.Source, c.Model, kind, got)
			}
			e := want/got - 1
			errs[kind] = append(errs[kind], math.Abs(e))
			fmt.Fprintf(&table, "%-28s %-22s %-7s %5d %-10s %12.4g %12.4g %+7.1f%%\n", c.Source, c.Model, c.Engine, c.Concurrency, kind, want, got, 100*e)
		}
	}
	t.Logf("published vs predicted:\n%s", table.String())
	for _, kind := range sortedKeys(publishedGoals) {
		med := median(errs[kind])
		t.Logf("%-10s median |published/predicted - 1| = %5.1f%% over %d (goal <= %.0f%%)", kind, 100*med, len(errs[kind]), 100*publishedGoals[kind])
		if len(errs[kind]) == 0 || med > publishedGoals[kind] {
			t.Errorf("%s: median error %.1f%% over %d measurements, goal <= %.0f%%", kind, 100*med, len(errs[kind]), 100*publishedGoals[kind])
		}
	}
}

// TestPublishedCitations checks every source carries the citation fields
// the figures need to be checked again.
func TestPublishedCitations(t *testing.T) {
	for name, src := range readPublished(t).Sources {
		for _, field := range []string{"title", "where", "versions", "hardware", "model", "workload", "tool", "figures"} {
			if strings.TrimSpace(src[field]) == "" {
				t.Errorf("source %s has no %s", name, field)
			}
		}
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
