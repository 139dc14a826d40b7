package bench

import (
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// progressEvery is how often the live line is redrawn: often enough to feel
// live, rarely enough to cost nothing next to the load.
const progressEvery = 500 * time.Millisecond

// progressLinesEvery is how often a log (stderr not a terminal) gets a
// progress line: a long soak shows it is alive without flooding the log.
const progressLinesEvery = 10 * time.Second

// progress draws one live line per load point on a terminal: done/total,
// live TTFT p95 and aggregate output tok/s. In lines mode (a log, not a
// terminal) it writes the same figures as a line of their own every
// progressLinesEvery instead, and nothing at the point's end.
type progress struct {
	w     io.Writer
	p     load.Point
	epoch time.Time
	lines bool
	mu    sync.Mutex
	done  int
	ttft  stats.Sample // bounded however long the point (stats.ExactMax)
	toks  int64
	first int64
	last  int64
	quit  chan struct{}
	wg    sync.WaitGroup
}

func newProgress(w io.Writer, p load.Point, epoch time.Time, lines bool) *progress {
	every := progressEvery
	if lines {
		every = progressLinesEvery
	}
	return startProgress(w, p, epoch, lines, every)
}

func startProgress(w io.Writer, p load.Point, epoch time.Time, lines bool, every time.Duration) *progress {
	pr := &progress{w: w, p: p, epoch: epoch, lines: lines, quit: make(chan struct{}), first: -1}
	if w == nil {
		return pr
	}
	pr.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				pr.draw(false)
			case <-pr.quit:
				if !pr.lines {
					pr.draw(true)
				}
				return
			}
		}
	})
	return pr
}

func (pr *progress) add(r *record.Record) {
	if pr.w == nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.done++
	if ttft, ok := metrics.TTFT(r); ok && r.Error == nil {
		pr.ttft.Add(ttft)
		pr.toks += int64(r.OutputTokens)
	}
	if pr.first < 0 || r.SentNS < pr.first {
		pr.first = r.SentNS
	}
	pr.last = max(pr.last, r.EndNS)
}

func (pr *progress) draw(final bool) {
	pr.mu.Lock()
	n, p95 := pr.ttft.Len(), pr.ttft.Quantile(0.95)
	done, toks, win := pr.done, pr.toks, float64(pr.last-pr.first)/1e9
	pr.mu.Unlock()
	label := pr.p.Load.Label()
	of := "?"
	if n := pr.p.Requests + pr.p.WarmupRequests; pr.p.Requests > 0 {
		of = strconv.Itoa(n)
	}
	line := fmt.Sprintf("[point %d %s] %d/%s done", pr.p.Index+1, label, done, of)
	if pr.lines {
		line = fmt.Sprintf("%s %s", time.Since(pr.epoch).Truncate(time.Second), line)
	} else {
		line = "\r\033[K" + line
	}
	if n > 0 && win > 0 {
		line += fmt.Sprintf(" · TTFT p95 %.0f ms · %.1f output tok/s", p95, float64(toks)/win)
	}
	if final || pr.lines {
		line += "\n"
	}
	fmt.Fprint(pr.w, line)
}

func (pr *progress) stop() {
	if pr.w == nil {
		return
	}
	close(pr.quit)
	pr.wg.Wait()
}
