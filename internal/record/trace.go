package record

import (
	"strconv"

	"github.com/servebench/servebench/internal/stats"
)

// Trace formats (run --trace-format).
const (
	TraceMooncake = "mooncake" // JSON Lines: timestamp (ms), input_length, output_length, hash_ids
	TraceAzure    = "azure"    // CSV: TIMESTAMP (a date and time), ContextTokens, GeneratedTokens
	TraceBurstGPT = "burstgpt" // CSV: Timestamp (s), Model, Request tokens, Response tokens, Log Type
)

// TraceLengths stands in run.json's prompt_tokens and output_tokens (and
// a judged replay's objective) for a trace's lengths, which its trace
// section describes.
const TraceLengths = "trace"

// Trace is a replayed trace as run.json keeps it: the file, the window
// and speed it was replayed at, and the shape of the requests in that
// window as the trace has them (docs/WORKLOADS.md, "Trace replay";
// docs/METRICS.md, "Trace replay"). Times are replay times: the trace's
// divided by Speed.
type Trace struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// BlockSize is the tokens per hash id (Mooncake); 0 for formats
	// without block ids.
	BlockSize int     `json:"block_size,omitempty"`
	Speed     float64 `json:"speed"`
	// StartS and DurationS are the window in trace seconds from the
	// file's first request (0: from the start, to the end); Max the cap
	// on requests (0: none).
	StartS    float64 `json:"start_s,omitempty"`
	DurationS float64 `json:"duration_s,omitempty"`
	Max       int     `json:"max,omitempty"`
	// Requests in the window; Skipped rows with a zero length (left out,
	// as docs/WORKLOADS.md says), with the first one's line.
	Requests         int   `json:"requests"`
	Skipped          int   `json:"skipped,omitempty"`
	SkippedFirstLine int64 `json:"skipped_first_line,omitempty"`
	// SpanS is the replay time from the first request to the last;
	// MeanRate the requests per second over it.
	SpanS    float64 `json:"span_s"`
	MeanRate float64 `json:"mean_rate"`
	// Arrivals counts requests per BinS seconds of replay time, from the
	// first request.
	BinS     float64 `json:"bin_s"`
	Arrivals []int   `json:"arrivals"`
	// PromptTokens and OutputTokens are the trace's lengths.
	PromptTokens stats.Dist `json:"prompt_tokens"`
	OutputTokens stats.Dist `json:"output_tokens"`
	// Reuse is the fraction of prompt tokens in blocks whose id an
	// earlier request of the window had: what a prefix cache large enough
	// could skip. Absent without block ids.
	Reuse *float64 `json:"reuse,omitempty"`
	// Longest is the largest prompt + output of a request, and its line.
	Longest     int   `json:"longest_tokens"`
	LongestLine int64 `json:"longest_line"`
	// Labels counts requests by the trace's own labels (BurstGPT's model
	// and log type), "column=value"; absent when it has none.
	Labels map[string]int `json:"labels,omitempty"`
}

// NominalRate is the rate of the trace's replay point, its label: the
// window's mean rate to three significant digits (1 for a window of one
// instant, which any rate labels).
func (t *Trace) NominalRate() float64 {
	if !(t.MeanRate > 0) {
		return 1
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(t.MeanRate, 'g', 3, 64), 64)
	return r
}

// Scale is how many times faster than the trace's own replay a point at
// rate replays it (a capacity search's probe, a target above the trace's
// rate): 1 for the replay itself.
func (t *Trace) Scale(rate float64) float64 {
	if !(rate > 0) {
		return 1
	}
	return rate / t.NominalRate()
}
