package main

import (
	"fmt"
	"time"
)

// manyChunks and manyGap shape the streams of the many-streams check: long
// enough that every stream is open at once, paced so that the lag is the
// client's and the scheduler's, not a saturated server's.
const (
	manyChunks = 40
	manyGap    = 50 * time.Millisecond
	// manyBase is the small run whose peak memory is subtracted, so that
	// the per-stream figure leaves out what the process holds anyway.
	manyBase = 100
)

// streams: many concurrent streams at once; all must complete. Lag is a
// chunk's client timestamp minus the instant the server began writing it
// (the server logs those); memory per stream is the peak RSS
// above a manyBase-stream run, divided by the extra streams.
func streams(c config) error {
	fmt.Printf("streams: %d at once, %d chunks %v apart (servebench prompts of 128 tokens)\n", c.many, manyChunks, manyGap)
	fmt.Printf("%-6s %-10s %9s %7s %9s %9s %9s %11s\n", "repeat", "client", "completed", "failed", "lag p50", "lag p99", "lag max", "KB/stream")
	for i := range c.repeats {
		for _, client := range []string{"plain", "servebench"} {
			r, err := manyRun(c, client, c.many)
			if err != nil {
				return err
			}
			base, err := manyRun(c, client, manyBase)
			if err != nil {
				return err
			}
			perStream := float64(r.rssKB-base.rssKB) / float64(c.many-manyBase)
			fmt.Printf("%-6d %-10s %9d %7d %8.2fms %8.2fms %8.2fms %11.1f\n", i+1, client, r.completed, r.failed,
				q(r.lag, 0.5), q(r.lag, 0.99), q(r.lag, 1), perStream)
		}
	}
	fmt.Println()
	return nil
}

type manyResult struct {
	completed, failed int
	lag               []float64 // ms
	rssKB             int64
}

// manyRun runs one client with n streams against a fresh server and
// matches its chunk timestamps with the server's flush log.
func manyRun(c config, client string, n int) (manyResult, error) {
	srv, err := startServer("-chunks", itoa(manyChunks), "-gap", manyGap.String())
	if err != nil {
		return manyResult{}, err
	}
	defer srv.stop()
	var r manyResult
	stamps := map[int64][]int64{}
	if client == "plain" {
		var pr plainResult
		p, err := self(&pr, "plain", "-url", srv.URL, "-c", itoa(n), "-n", itoa(n), "-stamp")
		if err != nil {
			return r, err
		}
		r.completed, r.failed, r.rssKB, stamps = pr.Requests-pr.Failed, pr.Failed, p.MaxRSSKB, pr.Stamps
	} else {
		p, d, err := sbRun(c, srv.URL, true, "--concurrency", itoa(n), "--requests", itoa(n),
			"--prompt-tokens", "128", "--output-tokens", itoa(manyChunks))
		if err != nil {
			return r, err
		}
		r.completed, r.failed, r.rssKB = d.Requests-d.Failed, d.Failed, p.MaxRSSKB
		for _, rec := range d.Records {
			at := d.Epoch.UnixNano() + rec.SentNS
			for _, ch := range rec.Chunks {
				stamps[int64(rec.PromptTokens)] = append(stamps[int64(rec.PromptTokens)], at+ch.AtNS)
			}
		}
	}
	flushes, err := srv.flushes()
	if err != nil {
		return r, err
	}
	for id, st := range stamps {
		fl := flushes[id]
		if len(fl) != len(st) {
			return r, fmt.Errorf("%s: request %d has %d timestamps, the server flushed %d chunks", client, id, len(st), len(fl))
		}
		for k := range st {
			r.lag = append(r.lag, float64(st[k]-fl[k])/1e6)
		}
	}
	return r, nil
}
