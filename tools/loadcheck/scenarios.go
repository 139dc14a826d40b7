package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/servebench/servebench/internal/stats"
)

// sbRun runs the servebench binary against url with the given load flags
// and reads its run directory back.
func sbRun(c config, url string, keep bool, flags ...string) (proc, runDir, error) {
	dir, err := os.MkdirTemp("", "loadcheck-")
	if err != nil {
		return proc{}, runDir{}, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "run")
	args := append([]string{"run", "--url", url, "--model", "m", "--warmup", "0", "--out", out}, flags...)
	args = append(args, c.extra...)
	p, err := runProc(c.servebench, args...)
	if err != nil {
		return p, runDir{}, err
	}
	d, err := readRun(out, keep)
	return p, d, err
}

func itoa(n int) string { return strconv.Itoa(n) }

// throughput: c streams of one-token chunks sent as fast as the server
// can, n requests in all; chunks/s over each client's measured window and
// over its whole command, servebench against the plain client.
func throughput(c config) error {
	fmt.Printf("throughput: %d streams, %d requests of %d chunks, servebench prompts of %d tokens\n", c.streams, c.requests, c.chunks, c.prompt)
	fmt.Printf("%-6s %14s %14s %8s %12s %12s %8s %13s %13s %8s %8s\n", "repeat", "plain chunk/s", "sb chunk/s", "window", "plain wall", "sb wall", "command", "plain µs/chunk", "sb µs/chunk", "sb lead", "sb tail")
	tmp, err := os.MkdirTemp("", "loadcheck-body-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	body, err := plainBody(tmp, c.prompt, c.chunks)
	if err != nil {
		return err
	}
	var window, whole []float64
	for i := range c.repeats {
		srv, err := startServer("-chunks", itoa(c.chunks))
		if err != nil {
			return err
		}
		var pr plainResult
		var pp, sp proc
		var sd runDir
		plain := func() error {
			pp, err = self(&pr, "plain", "-url", srv.URL, "-c", itoa(c.streams), "-n", itoa(c.requests), "-body", body)
			return err
		}
		sb := func() error {
			sp, sd, err = sbRun(c, srv.URL, false, "--concurrency", itoa(c.streams), "--requests", itoa(c.requests),
				"--prompt-tokens", itoa(c.prompt), "--output-tokens", itoa(c.chunks))
			return err
		}
		err = inOrder(i, plain, sb)
		srv.stop()
		if err != nil {
			return err
		}
		if pr.Failed > 0 || sd.Failed > 0 || sd.Requests != c.requests {
			return fmt.Errorf("failures: plain %d failed, servebench %d failed of %d", pr.Failed, sd.Failed, sd.Requests)
		}
		pw, sw := float64(pr.Chunks)/pr.WindowS, float64(sd.Chunks)/sd.Window.Seconds()
		pc, sc := float64(pr.Chunks)/pp.Wall.Seconds(), float64(sd.Chunks)/sp.Wall.Seconds()
		window, whole = append(window, sw/pw), append(whole, sc/pc)
		fmt.Printf("%-6d %14.0f %14.0f %7.2fx %11.2fs %11.2fs %7.2fx %13.3f %13.3f %7.2fs %7.2fs\n", i+1, pw, sw, sw/pw, pp.Wall.Seconds(), sp.Wall.Seconds(), sc/pc,
			float64(pp.CPU.Microseconds())/float64(pr.Chunks), float64(sp.CPU.Microseconds())/float64(sd.Chunks),
			sd.First.Sub(sp.Start).Seconds(), (sp.Wall - sd.First.Sub(sp.Start) - sd.Window).Seconds())
	}
	fmt.Printf("window ratio: %s; whole command: %s\n\n", spread(window), spread(whole))
	return nil
}

// inOrder runs a then b on even repeats and b then a on odd ones, so that
// neither client always runs on a machine the other has just warmed.
func inOrder(i int, a, b func() error) error {
	if i%2 == 1 {
		a, b = b, a
	}
	if err := a(); err != nil {
		return err
	}
	return b()
}

// spread is "median (min–max) over n".
func spread(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return "none"
	}
	return fmt.Sprintf("median %.2fx (%.2f–%.2f over %d)", stats.Quantile(s, 0.5), s[0], s[len(s)-1], len(s))
}

// q is the p-quantile of xs (sorted in place) by servebench's own
// estimator (docs/METRICS.md), so that the plain client's and vegeta's
// lags read as servebench's dispatch lag does beside them; 0 for none.
func q(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return stats.Quantile(xs, p)
}
