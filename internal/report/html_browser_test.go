package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The page in a real browser: Debian's chromium, headless, through the
// DevTools protocol. Without chromium the tests skip, except in CI
// (CI=true), where .ci/run installs it and its absence is a failure.

func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: CI installs it (apt-get install -y chromium) to check the HTML report in a browser")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium): the HTML report is not checked in a browser")
	return ""
}

// pageView is what the browser saw of a page.
type pageView struct {
	problems []string // console errors, exceptions, requests beyond the file
	charts   []chartView
	legends  []legendView
	// first is the class of the page's first section, answer its text.
	first, answer string
	// hover is the first chart's legend (x, then the first series) with
	// the cursor on its first point, then at rest.
	hover [2]string
	// toggled counts the distributions redrawn on the other scale when
	// their log checkbox is clicked, of cdfs.
	toggled, cdfs int
	shot          []byte
	// loaded is how long the page took from navigation to drawn.
	loaded time.Duration
}

type chartView struct {
	Title  string `json:"title"`
	Points int    `json:"points"`
	Canvas bool   `json:"canvas"`
	Drawn  int    `json:"drawn"` // values in the uPlot object's data
}

// legendView is what a chart's legend and its labels show: one row per
// series (the x series first) and the boxes of the labels drawn over it.
type legendView struct {
	Title  string `json:"title"`
	Series []struct {
		Label  string `json:"label"`
		Value  string `json:"value"`
		Stroke string `json:"stroke"`
		Dash   string `json:"dash"`
		Swatch bool   `json:"swatch"`
	} `json:"series"`
	Labels []labelBox `json:"labels"`
}

type labelBox struct {
	Text   string  `json:"text"`
	Left   float64 `json:"left"`
	Top    float64 `json:"top"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// legendsJS reads each drawn chart's legend from the DOM (the swatch's
// colour and dash as the page drew them) and its labels' boxes from its
// chart object (u.sbLabels).
const legendsJS = `Array.from(document.querySelectorAll('.chart')).filter(function (e) { return e.querySelector('canvas'); }).map(function (e) {
  var c = window.sbCharts.find(function (x) { return x.chart.root.parentNode === e; });
  var rows = Array.from(e.querySelectorAll('.u-legend tr.u-series')).map(function (tr) {
    var mk = tr.querySelector('.u-marker'), lab = tr.querySelector('.u-label'), val = tr.querySelector('.u-value');
    return {label: lab ? lab.textContent : '', value: val ? val.textContent : '', stroke: mk && mk.dataset.stroke || '',
      dash: mk && mk.dataset.dash || '', swatch: !!(mk && mk.querySelector('svg'))};
  });
  return {title: e.dataset.title, series: rows, labels: (c && c.chart.sbLabels) || []};
})`

// hoverJS moves the mouse onto the first chart's first point and reads
// its legend, then moves it away and reads it again.
const hoverJS = `(function () {
  var c = window.sbCharts[0];
  if (!c) return ['', ''];
  var u = c.chart, r = u.over.getBoundingClientRect();
  var at = {clientX: r.left + u.valToPos(u.data[0][0], 'x'), clientY: r.top + r.height / 2, bubbles: true};
  function read() {
    var rows = u.root.querySelectorAll('.u-legend tr.u-series');
    return rows[0].querySelector('.u-value').textContent + '|' + rows[1].querySelector('.u-value').textContent;
  }
  u.over.dispatchEvent(new MouseEvent('mouseenter', at));
  u.over.dispatchEvent(new MouseEvent('mousemove', at));
  var on = read();
  u.over.dispatchEvent(new MouseEvent('mouseleave', at));
  return [on, read()];
})()`

// toggleJS clicks every distribution's log checkbox and counts those
// redrawn on the other scale.
const toggleJS = `(function () {
  var before = Array.from(document.querySelectorAll('.chart[data-log]')).map(function (e) { return e.dataset.title + '|' + e.dataset.log; });
  Array.from(document.querySelectorAll('.logopt input')).forEach(function (cb) { cb.click(); });
  var after = Array.from(document.querySelectorAll('.chart[data-log]')).map(function (e) { return e.dataset.title + '|' + e.dataset.log; });
  var flipped = after.filter(function (a) { return before.indexOf(a) < 0 && e(a); }).length;
  function e(a) { return a.split('|')[1] === 'true' || a.split('|')[1] === 'false'; }
  return [flipped, before.length];
})()`

// chartsJS lists the page's charts from the DOM and, for each, the values
// its uPlot object holds.
const chartsJS = `Array.from(document.querySelectorAll('.chart')).map(function (e) {
  var c = window.sbCharts.find(function (x) { return x.chart.root.parentNode === e; });
  var drawn = 0;
  if (c) c.chart.data.slice(1).forEach(function (s) { s.forEach(function (v) { if (v !== null && v !== undefined) drawn++; }); });
  return {title: e.dataset.title, points: +e.dataset.points, canvas: !!e.querySelector('canvas'), drawn: drawn};
})`

// openPage loads an HTML file in chromium and reports what it saw.
func openPage(t testing.TB, path string) pageView {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // the tab, before listening to it
		t.Fatalf("starting chromium: %v", err)
	}
	var mu sync.Mutex
	var v pageView
	url := "file://" + path
	problem := func(p string) {
		mu.Lock()
		defer mu.Unlock()
		v.problems = append(v.problems, p)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				problem("console " + string(e.Type) + ": " + consoleText(e.Args))
			}
		case *runtime.EventExceptionThrown:
			problem("exception: " + e.ExceptionDetails.Text + " " + consoleText([]*runtime.RemoteObject{e.ExceptionDetails.Exception}))
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				problem("log: " + e.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			if e.Request.URL != url {
				problem("request beyond the file: " + e.Request.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`body[data-ready="true"]`)); err != nil {
		t.Fatalf("chromium on %s: %v", path, err)
	}
	v.loaded = time.Since(start)
	if v.charts, err = chromedp.Run(ctx, chromedp.Evaluate[[]chartView](chartsJS)); err != nil {
		t.Fatalf("listing the charts: %v", err)
	}
	if v.legends, err = chromedp.Run(ctx, chromedp.Evaluate[[]legendView](legendsJS)); err != nil {
		t.Fatalf("reading the legends: %v", err)
	}
	first, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(function () { var s = document.querySelector('main > section'); return s ? [s.className, s.innerText] : ['', '']; })()`))
	if err != nil {
		t.Fatalf("reading the first section: %v", err)
	}
	v.first, v.answer = first[0], first[1]
	hover, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](hoverJS))
	if err != nil {
		t.Fatalf("hovering: %v", err)
	}
	v.hover = [2]string{hover[0], hover[1]}
	toggle, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](toggleJS))
	if err != nil {
		t.Fatalf("switching scales: %v", err)
	}
	v.toggled, v.cdfs = toggle[0], toggle[1]
	if v.shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return v
}

func consoleText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		switch {
		case a == nil:
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Value))
		}
	}
	return strings.Join(parts, " ")
}

// notBlank: the screenshot has ink on more than 2% of its pixels and more
// than a few colours (charts' lines, fills and text).
func notBlank(t *testing.T, shot []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	ink, colours := 0, map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
			colours[[3]uint32{r >> 12, g >> 12, bl >> 12}] = true
		}
	}
	total := (b.Dx() / 2) * (b.Dy() / 2)
	if ink*50 < total || len(colours) < 16 {
		t.Errorf("screenshot looks blank: %d of %d pixels inked, %d colours", ink, total, len(colours))
	}
}

func writePage(t testing.TB, p *HTMLPage) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, p); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkCharts: every chart the page drew holds data, both in the DOM's
// count and in its chart object, and the charts wanted are among them.
func checkCharts(t *testing.T, v pageView, want []string) {
	t.Helper()
	titles := map[string]bool{}
	for _, c := range v.charts {
		titles[c.Title] = true
		if c.Points == 0 || !c.Canvas || c.Drawn != c.Points {
			t.Errorf("chart %q: %d points in the DOM, %d in its chart, canvas %v", c.Title, c.Points, c.Drawn, c.Canvas)
		}
	}
	for _, w := range want {
		if !titles[w] {
			t.Errorf("no chart %q among %v", w, titles)
		}
	}
}

func TestHTMLInBrowser(t *testing.T) {
	r := samplePage(t, "runs/a", 300, 20)
	path := writePage(t, &HTMLPage{Title: "servebench · test", Runs: []HTMLRun{r}})
	v := openPage(t, path)
	for _, p := range v.problems {
		t.Error(p)
	}
	checkCharts(t, v, []string{
		"Decode speed per request and aggregate output tok/s",
		"TTFT p50/p95/p99 (ms) against load", "ITL p50/p95/p99 (ms) against load", "E2E p50/p95/p99 (ms) against load",
		"TTFT distribution (CDF)", "ITL distribution (CDF)",
		"Throughput, requests in flight and errors", "KV cache %", "VRAM GiB", "GPU power W", "GPU temperature °C",
	})
	notBlank(t, v.shot)
}

// TestHTMLOverlayInBrowser: two candidates on one page, overlaid where
// they share a workload, side by side elsewhere, with a caller's table.
func TestHTMLOverlayInBrowser(t *testing.T) {
	a, b := samplePage(t, "vllm", 150, 10), samplePage(t, "sglang", 150, 12)
	tables := []HTMLTable{{Title: "Differences", Columns: []string{"metric", "change"}, Rows: [][]string{{"ttft p95", "+3%"}}}}
	v := openPage(t, writePage(t, &HTMLPage{Title: "vllm vs sglang", Runs: []HTMLRun{a, b}, Tables: tables}))
	for _, p := range v.problems {
		t.Error(p)
	}
	checkCharts(t, v, []string{"Decode speed per request and aggregate output tok/s",
		"vllm · Throughput, requests in flight and errors", "sglang · Throughput, requests in flight and errors"})
	notBlank(t, v.shot)
}

// BenchmarkHTMLInBrowser100k: chromium opens the page of 100,000 requests
// and draws every chart (docs/PERFORMANCE.md, "HTML report"); ms/load is
// from navigation to the page's last chart drawn, the browser's start
// left out.
func BenchmarkHTMLInBrowser100k(b *testing.B) {
	run, _ := sampleRun(b, "bench", benchLoads, benchRequests, benchTokens, nil)
	path := writePage(b, &HTMLPage{Title: "bench", Runs: []HTMLRun{run}})
	var total time.Duration
	n := 0
	for b.Loop() {
		v := openPage(b, path)
		if len(v.problems) > 0 || len(v.charts) < 8 {
			b.Fatalf("problems %v, %d charts", v.problems, len(v.charts))
		}
		total += v.loaded
		n++
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms/load")
}
