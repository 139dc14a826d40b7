package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// writeWorkers lists the workers of a merged sharded run (report DIR0
// DIR1 ...): one row per worker and point with what its own client did,
// so that a slow result can be traced to the machine that was slow, and
// each worker's start offset against the mark.
func writeWorkers(b *strings.Builder, s *metrics.Summary, markdown bool) {
	if s.Run == nil || len(s.Run.Workers) == 0 {
		return
	}
	title := fmt.Sprintf("Workers (%d; start offset: the first point's start after the mark, by the worker's clock)", len(s.Run.Workers))
	head := []string{"worker", "point", "sent", "CPU % of one core", "dispatch lag p99 ms", "start offset ms", "state", "dir"}
	rows := [][]string{head}
	for _, w := range s.Run.Workers {
		for k, pc := range w.Points {
			row := []string{strconv.Itoa(w.Index), pc.Load.Label(), strconv.Itoa(pc.Client.Sent),
				num(pc.Client.CPUPercent, 0), num(pc.Client.LagP99MS, 1), "", workerState(w, pc), w.Dir}
			if k == 0 {
				row[5] = num(w.StartOffsetMS, 1)
			}
			rows = append(rows, row)
		}
		if len(w.Points) == 0 {
			rows = append(rows, []string{strconv.Itoa(w.Index), "-", "0", "-", "-", "-", workerState(w, record.PointClient{}), w.Dir})
		}
	}
	if markdown {
		b.WriteString("\n### " + title + "\n\n| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat("---|", len(head)) + "\n")
		for _, r := range rows[1:] {
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		}
		return
	}
	b.WriteString("\n" + title + "\n")
	// The column names serve as the group headings row, so no blank row.
	writeAligned(b, rows)
}

// workerState says how a worker's point ended.
func workerState(w record.WorkerRun, pc record.PointClient) string {
	switch {
	case pc.Idle:
		return "idle (no share)"
	case pc.Client.Interrupted:
		return "interrupted"
	case !w.Finished:
		return "unfinished"
	}
	return "ok"
}
