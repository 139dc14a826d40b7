package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/compare"
	"github.com/servebench/servebench/internal/record"
)

// Pages read at a glance (issue 27), checked in chromium: each page kind
// states its answer first, its legends identify every series, no two
// labels drawn over a chart overlap, and nothing errs. The screenshots are
// written for a reviewer: to $SERVEBENCH_SCREENSHOTS when set, else to the
// test's artifact directory (go test -artifacts keeps it).

// checkLegends: every series of every chart has a label, a swatch drawn
// in its colour and dash, and a value at rest; no two series of a chart
// share colour and dash.
func checkLegends(t *testing.T, v pageView) {
	t.Helper()
	for _, l := range v.legends {
		if len(l.Series) < 2 {
			t.Errorf("chart %q: legend of %d rows", l.Title, len(l.Series))
			continue
		}
		if x := l.Series[0].Value; x == "" || x == "--" {
			t.Errorf("chart %q: x at rest reads %q", l.Title, x)
		}
		seen := map[string]string{}
		for _, s := range l.Series[1:] {
			if s.Label == "" || !s.Swatch || s.Stroke == "" || s.Value == "" || s.Value == "--" {
				t.Errorf("chart %q: series %+v does not identify itself", l.Title, s)
			}
			style := s.Stroke + " " + s.Dash
			if other, dup := seen[style]; dup {
				t.Errorf("chart %q: %q and %q are drawn alike (%s)", l.Title, other, s.Label, style)
			}
			seen[style] = s.Label
		}
	}
}

// checkLabels: no two labels' boxes on a chart overlap.
func checkLabels(t *testing.T, v pageView) {
	t.Helper()
	for _, l := range v.legends {
		for i, a := range l.Labels {
			for _, b := range l.Labels[i+1:] {
				if a.Left < b.Left+b.Width && b.Left < a.Left+a.Width && a.Top < b.Top+b.Height && b.Top < a.Top+a.Height {
					t.Errorf("chart %q: label %q %+v overlaps %q %+v", l.Title, a.Text, a, b.Text, b)
				}
			}
		}
	}
}

// checkHover: under the cursor the legend shows the point there, at rest
// the last point's; "--" in neither.
func checkHover(t *testing.T, v pageView) {
	t.Helper()
	on, rest := v.hover[0], v.hover[1]
	t.Logf("first chart's legend under the cursor %q, at rest %q", on, rest)
	if on == "" || on == rest || strings.Contains(on, "--") || strings.Contains(rest, "--") {
		t.Errorf("legend under the cursor %q, at rest %q", on, rest)
	}
}

func saveShot(t *testing.T, name string, shot []byte) {
	t.Helper()
	dir := os.Getenv("SERVEBENCH_SCREENSHOTS")
	if dir == "" {
		dir = t.ArtifactDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// comparePage is compare --format html's page of two sample runs.
func comparePage(t *testing.T) *HTMLPage {
	var ra, rb []*record.Record
	a, _ := sampleRun(t, "runs/before", []int{1, 4, 16}, 300, 20, func(r *record.Record) { ra = append(ra, r) })
	b, _ := sampleRun(t, "runs/after-longer", []int{1, 4, 16}, 300, 30, func(r *record.Record) { rb = append(rb, r) })
	b.Summary.Run.Started = "2026-12-02T07:00:00Z" // another run
	res := compare.Compare(compareSide(a.Name, a.Summary.Run, ra...), compareSide(b.Name, b.Summary.Run, rb...),
		compare.Options{Gates: []compare.Gate{parseGate(t, "ttft p95 +10%")}})
	a.Objective, a.Verdict, b.Objective, b.Verdict = nil, nil, nil, nil
	return ComparisonPage(res, []HTMLRun{a, b})
}

// matrixRun is a judged workload matrix of two cells, its c=4 repeated.
func matrixRun(t *testing.T) HTMLRun {
	var loads []record.Load
	for _, w := range []string{"in=128 out=64", "in=1024 out=64"} {
		for _, c := range []int{1, 4, 4, 16} {
			loads = append(loads, record.Load{Workload: w, Concurrency: c})
		}
	}
	r, _ := sampleLoads(t, "matrix", loads, 800, 20, nil)
	return r
}

func TestPagesAtAGlanceInBrowser(t *testing.T) {
	unjudged := samplePage(t, "runs/plain", 300, 20)
	unjudged.Objective, unjudged.Verdict = nil, nil
	for _, c := range []struct {
		name string
		page func(t *testing.T) *HTMLPage
		// answer: what the first section says
		answer []string
		charts []string
	}{
		{"run", func(t *testing.T) *HTMLPage { return NewPage([]HTMLRun{unjudged}) },
			[]string{"No objective judged · 3 load points", "highest output"}, nil},
		{"judged", func(t *testing.T) *HTMLPage { return NewPage([]HTMLRun{samplePage(t, "runs/judged", 300, 20)}) },
			[]string{"objective chat at c=16", "capacity", "SLOs"}, nil},
		{"candidates", func(t *testing.T) *HTMLPage {
			return NewPage([]HTMLRun{samplePage(t, "vllm", 150, 10), samplePage(t, "sglang", 150, 12)})
		}, []string{"meets the objective", "vllm", "sglang"}, nil},
		{"candidates-one-meets", func(t *testing.T) *HTMLPage {
			meets := samplePage(t, "vllm", 150, 10)
			v := *meets.Verdict // the same evidence, judged to hold: the page names it
			v.Holds, v.Failing = true, false
			meets.Verdict = &v
			return NewPage([]HTMLRun{meets, samplePage(t, "sglang", 150, 12)})
		}, []string{"Meets the objective: vllm (capacity", "; not: sglang NOT MET"}, nil},
		{"compare", comparePage, []string{"B (runs/after-longer)", "A (runs/before)", "Controlled comparison"}, nil},
		{"matrix", func(t *testing.T) *HTMLPage { return NewPage([]HTMLRun{matrixRun(t)}) },
			[]string{"By workload", "in=1024 out=64"},
			[]string{"Output tok/s against load, one line per workload cell", "TTFT p95 (ms) against load, one line per workload cell"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := openPage(t, writePage(t, c.page(t)))
			saveShot(t, c.name, v.shot)
			for _, p := range v.problems {
				t.Error(p)
			}
			if v.first != "answer" {
				t.Errorf("the page opens with %q, want the answer", v.first)
			}
			for _, w := range c.answer {
				if !strings.Contains(v.answer, w) {
					t.Errorf("the answer lacks %q:\n%s", w, v.answer)
				}
			}
			checkCharts(t, v, c.charts)
			checkLegends(t, v)
			checkLabels(t, v)
			checkHover(t, v)
			if v.cdfs == 0 || v.toggled != v.cdfs {
				t.Errorf("%d of %d distributions redrawn when their log checkbox was clicked", v.toggled, v.cdfs)
			}
			notBlank(t, v.shot)
		})
	}
}
