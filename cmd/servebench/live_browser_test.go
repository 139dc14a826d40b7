package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The live page in a real browser: Debian's chromium, headless, through
// the DevTools protocol. Without chromium the test skips, except in CI
// (CI=true), where its absence is a failure.

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: CI installs it (apt-get install -y chromium) to check the live page in a browser")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium): the live page is not checked in a browser")
	return ""
}

// screenshotDir is where the browser tests leave their screenshots for a
// reviewer: $SERVEBENCH_SCREENSHOTS, or a directory under the system's
// temporary one.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("SERVEBENCH_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "servebench-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLivePageInBrowser opens the live page during a run: what it shows
// changes between two reads, ends equal to summary.json, and no console
// error is raised on the way.
func TestLivePageInBrowser(t *testing.T) {
	exe := chromiumPath(t)
	dir := filepath.Join(t.TempDir(), "run")
	lr := startLive(t, nil, "run", "--live", "--live-linger", "1m", "--out", dir,
		"--concurrency", "2,4", "--requests", "120", "--output-tokens", "128")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1100))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // the tab, before listening to it
		t.Fatalf("starting chromium: %v", err)
	}
	ctx, cancel = context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	problem := func(p string) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, p)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				problem("console " + string(e.Type))
			}
		case *runtime.EventExceptionThrown:
			problem("exception: " + e.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				problem("log: " + e.Entry.Text)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(lr.url), chromedp.WaitVisible(`body[data-ready="true"]`)); err != nil {
		t.Fatalf("chromium on %s: %v\n%s", lr.url, err, lr.errText())
	}
	// two reads of the page while the run goes: what it shows changes
	first, err := chromedp.Run(ctx, chromedp.Text(`#done`))
	if err != nil {
		t.Fatal(err)
	}
	second := first
	for deadline := time.Now().Add(60 * time.Second); second == first && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		if second, err = chromedp.Run(ctx, chromedp.Text(`#done`)); err != nil {
			t.Fatal(err)
		}
	}
	if second == first {
		t.Errorf("requests done stayed %q for 60 s", first)
	}
	// the end: the page says so, and holds summary.json's figures
	if err := chromedp.Do(ctx, chromedp.WaitVisible(`body[data-status="ended"]`)); err != nil {
		t.Fatalf("the page never said the run ended: %v\n%s", err, lr.errText())
	}
	pointsJSON, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](`window.sbLive.state.points`))
	if err != nil {
		t.Fatal(err)
	}
	p95Cell, err := chromedp.Run(ctx, chromedp.Text(`#points tbody tr[data-index="0"] td[data-metric="p95"]`))
	if err != nil {
		t.Fatal(err)
	}
	banner, err := chromedp.Run(ctx, chromedp.Text(`#final-text`))
	if err != nil {
		t.Fatal(err)
	}
	var points []map[string]json.RawMessage
	if err := json.Unmarshal(pointsJSON, &points); err != nil {
		t.Fatal(err)
	}
	sameAsSummary(t, dir, points)
	var ttft struct {
		P95 float64 `json:"p95"`
	}
	json.Unmarshal(points[0]["ttft_ms"], &ttft)
	if want := strconv.FormatFloat(ttft.P95, 'f', 1, 64); p95Cell != want {
		t.Errorf("point 1's TTFT p95 cell: got %q, want %q", p95Cell, want)
	}
	if !strings.Contains(banner, "The run has ended") || !strings.Contains(banner, "final report") {
		t.Errorf("the end banner: %q", banner)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(screenshotDir(t), "live.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser: %s", p)
	}
}
