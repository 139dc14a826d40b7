package telemetry

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"slices"
)

// maxLine bounds one line of telemetry.jsonl: an unknown engine's raw
// series can be long, but not without limit.
const maxLine = 16 << 20

// ScanSamples reads samples a line each, as the sampler writes them
// (SamplerOptions.Out; a run directory's telemetry.jsonl), and calls fn
// with each, in the file's order. A damaged line (a run killed while
// writing leaves half a last line) is skipped and counted: samples are
// evidence beside the records, and what can be read still counts. Only a
// read error of r itself is an error.
func ScanSamples(r io.Reader, fn func(*Sample)) (damaged int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var s Sample
		if json.Unmarshal(line, &s) != nil || s.Source == "" {
			damaged++
			continue
		}
		fn(&s)
	}
	return damaged, sc.Err()
}

// ReadSamples reads every sample of r (ScanSamples) into memory, in time
// order.
func ReadSamples(r io.Reader) (samples []Sample, damaged int, err error) {
	damaged, err = ScanSamples(r, func(s *Sample) { samples = append(samples, *s) })
	// reads end out of order; a window wants time order
	slices.SortStableFunc(samples, func(a, b Sample) int { return cmp.Compare(a.TNS, b.TNS) })
	return samples, damaged, err
}
