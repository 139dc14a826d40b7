package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/record"
)

// runDir is what the check reads back from a servebench run directory.
type runDir struct {
	Requests, Failed int
	Chunks           int64
	Window           time.Duration // first measured send to last measured end
	First            time.Time     // the first measured send
	Epoch            time.Time
	Records          []*record.Record // kept only when asked
	Client           record.ClientStats
}

// readRun reads records.jsonl and run.json of dir.
func readRun(dir string, keep bool) (runDir, error) {
	var d runDir
	run, err := record.ReadRun(filepath.Join(dir, bench.RunFile))
	if err != nil {
		return d, err
	}
	if d.Epoch, err = time.Parse(time.RFC3339Nano, run.Started); err != nil {
		return d, fmt.Errorf("run.json started: %w", err)
	}
	if len(run.Points) > 0 {
		d.Client = run.Points[0].Client
	}
	f, err := os.Open(filepath.Join(dir, bench.RecordsFile))
	if err != nil {
		return d, err
	}
	defer f.Close()
	var span record.Span
	rd := record.NewReader(f)
	for rd.Next() {
		r := rd.Record()
		if r.Phase != record.PhaseMeasured {
			continue
		}
		d.Requests++
		if r.Error != nil {
			d.Failed++
		}
		d.Chunks += int64(len(r.Chunks))
		span.Add(r)
		if keep {
			c := *r
			c.Chunks = append([]record.Chunk(nil), r.Chunks...)
			d.Records = append(d.Records, &c)
		}
	}
	d.Window = time.Duration(span.EndNS - span.StartNS)
	d.First = d.Epoch.Add(time.Duration(span.StartNS))
	return d, rd.Err()
}
