package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// htmlData is the part of the page's embedded data these tests read.
type htmlData struct {
	Title string `json:"title"`
	Runs  []struct {
		Name    string `json:"name"`
		Verdict *struct {
			Objective    string   `json:"objective"`
			Holds        bool     `json:"holds"`
			Inconclusive bool     `json:"inconclusive"`
			SLOs         []string `json:"slos"`
			Workloads    []struct {
				Workload string `json:"workload"`
			} `json:"workloads"`
		} `json:"verdict"`
		Groups []struct {
			Workload string `json:"workload"`
			Points   []struct {
				Label     string  `json:"label"`
				Completed int     `json:"completed"`
				OutputTPS float64 `json:"output_tps"`
			} `json:"points"`
			CDFs []struct {
				Label string                `json:"label"`
				TTFT  struct{ X []float64 } `json:"ttft"`
			} `json:"cdfs"`
		} `json:"groups"`
		Timeline *struct {
			T []float64 `json:"t_s"`
		} `json:"timeline"`
	} `json:"runs"`
}

// htmlRun runs the simulator into a fresh directory with extra flags and
// returns the directory and the exit code.
func htmlRun(t *testing.T, extra ...string) (string, int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	args := append([]string{"run", "--concurrency", "1,4", "--requests", "8", "--output-tokens", "16", "--out", dir}, extra...)
	code, _, stderr := run(t, args...)
	if code != 0 && code != 3 {
		t.Fatalf("run exit %d\n%s", code, stderr)
	}
	return dir, code
}

var htmlDataRe = regexp.MustCompile(`(?s)<script type="application/json" id="sb-data">(.*?)</script>`)

// htmlPage checks a page is one self-contained file and returns its data.
func htmlPage(t *testing.T, page string) htmlData {
	t.Helper()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(page, "</html>\n") {
		t.Fatalf("not a whole HTML page: %.80q ... %.80q", page, page[max(0, len(page)-80):])
	}
	// nothing is fetched: no source, link, stylesheet import or url()
	for _, ref := range []string{"src=", "href=", "url(", "@import", "<link", "<iframe"} {
		if strings.Contains(page, ref) {
			t.Errorf("the page refers to something outside it: %q", ref)
		}
	}
	m := htmlDataRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no embedded data in the page")
	}
	var d htmlData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	return d
}

// TestHTMLRunWritesReport: a run with --out writes report.html, and
// report --format html prints the same page from the directory.
func TestHTMLRunWritesReport(t *testing.T) {
	dir, _ := htmlRun(t)
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatalf("run wrote no report.html: %v", err)
	}
	d := htmlPage(t, string(b))
	if len(d.Runs) != 1 || d.Runs[0].Name != "run" || d.Runs[0].Verdict != nil {
		t.Fatalf("runs %+v, want one unjudged run named after its directory", d.Runs)
	}
	g := d.Runs[0].Groups
	if len(g) != 1 || len(g[0].Points) != 2 || g[0].Points[0].Label != "c=1" || g[0].Points[1].Completed != 8 || g[0].Points[1].OutputTPS <= 0 {
		t.Errorf("load points %+v, want c=1 and c=4 with 8 requests each", g)
	}
	if len(g) == 1 && (len(g[0].CDFs) != 2 || len(g[0].CDFs[1].TTFT.X) == 0) {
		t.Errorf("distributions %+v, want one TTFT curve per point", g[0].CDFs)
	}
	if d.Runs[0].Timeline == nil || len(d.Runs[0].Timeline.T) == 0 {
		t.Error("no timeline")
	}
	code, stdout, stderr := run(t, "report", "--format", "html", dir)
	if code != 0 {
		t.Fatalf("report exit %d\n%s", code, stderr)
	}
	if stdout != string(b) {
		t.Errorf("report --format html printed %d bytes, not the %d of report.html", len(stdout), len(b))
	}
}

// TestHTMLJudgedRun: a judged run's page states its verdict; report
// judges anew with --slo, and exits 3 as it does in the other formats.
func TestHTMLJudgedRun(t *testing.T) {
	dir, code := htmlRun(t, "--slo", "ttft p95 <= 1ms")
	if code != 3 {
		t.Fatalf("run exit %d, want 3 (an objective no server meets)", code)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	d := htmlPage(t, string(b))
	if v := d.Runs[0].Verdict; v == nil || v.Holds || v.Objective != "command-line" {
		t.Errorf("verdict %+v, want the objective not met", v)
	}
	// judged anew by the SLO given here; exit 0 exactly when it holds, 4
	// when it is inconclusive (a loaded machine may leave a load not held)
	code, stdout, _ := run(t, "report", "--format", "html", "--slo", "ttft p95 <= 60m", dir)
	v := htmlPage(t, stdout).Runs[0].Verdict
	if v == nil || len(v.SLOs) != 1 || v.SLOs[0] != "ttft p95 <= 60m" || (code == 0) != v.Holds || (code == 4) != v.Inconclusive ||
		(code != 0 && code != 3 && code != 4) {
		t.Errorf("report --slo 'ttft p95 <= 60m': exit %d, verdict %+v; want that SLO's verdict, exit 3 only when it fails", code, v)
	}
}

// TestHTMLOverlay: several run directories make one page, candidates side
// by side; in another format several directories are refused with a
// pointer to compare.
func TestHTMLOverlay(t *testing.T) {
	a, _ := htmlRun(t)
	b, _ := htmlRun(t, "--seed", "2")
	code, stdout, stderr := run(t, "report", "--format", "html", a, b)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	d := htmlPage(t, stdout)
	if len(d.Runs) != 2 || d.Title != "servebench · run vs run" || len(d.Runs[1].Groups) != 1 {
		t.Errorf("title %q, %d runs; want both runs", d.Title, len(d.Runs))
	}
	code, _, stderr = run(t, "report", a, b)
	if code != 2 || !strings.Contains(stderr, "servebench compare") || !strings.Contains(stderr, "--format html") {
		t.Errorf("report of two directories as text: exit %d\n%s", code, stderr)
	}
}

// TestHTMLMatrix: a workload matrix's page has a section per cell, in the
// order the cells ran, and its verdict one line per cell.
func TestHTMLMatrix(t *testing.T) {
	dir, _ := htmlRun(t, "--prompt-tokens", "128", "--prompt-tokens", "512", "--slo", "ttft p95 <= 60m")
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	r := htmlPage(t, string(b)).Runs[0]
	if len(r.Groups) != 2 || r.Groups[0].Workload != "in=128 out=16" || r.Groups[1].Workload != "in=512 out=16" || len(r.Groups[1].Points) != 2 {
		t.Fatalf("groups %+v, want the two cells with c=1 and c=4 each", r.Groups)
	}
	if v := r.Verdict; v == nil || len(v.Workloads) != 2 || v.Workloads[1].Workload != "in=512 out=16" {
		t.Errorf("verdict %+v, want one per cell", v)
	}
}
