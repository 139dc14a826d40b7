// Package record owns the per-request Record, the product of a run, and its
// JSON Lines encoding. Every report servebench prints is a pure function of
// records, so a Record carries everything the metrics need and nothing else.
//
// All instants are nanoseconds since the run's epoch (a monotonic clock
// reading taken when the run started); wall-clock time appears only once, in
// the run header, so that clock steps cannot corrupt latencies.
package record

import "strconv"

// Schema names the records format; it is written in every record so that a
// file can be recognised on its own.
const Schema = "servebench.record/v1"

// Load identifies the load point a request belongs to. Exactly one of
// Concurrency and Rate is set; MaxConcurrency caps an open loop.
//
// Workload names the workload cell of a workload matrix (repeated
// --prompt-tokens or --output-tokens), e.g. "in=128 out=64"; it is empty
// when the run has a single workload. It belongs to the load point's
// identity: c=4 of one workload is not a repeat of c=4 of another, and
// every map keyed by Load keeps them apart.
type Load struct {
	Workload       string  `json:"workload,omitempty"`
	Concurrency    int     `json:"concurrency,omitempty"`
	Rate           float64 `json:"rate,omitempty"`
	MaxConcurrency int     `json:"max_concurrency,omitempty"`
}

// Label names a load the way a user set it, in the short form: "c=4",
// "r=2/s", or "r=2/s ≤8" for an open loop capped at 8 in flight; prefixed
// by the workload cell when there is one ("in=128 out=64 c=4").
func (l Load) Label() string {
	if l.Workload != "" {
		return l.Workload + " " + l.Text(LoadShort)
	}
	return l.Text(LoadShort)
}

// LoadForm is how a load is written.
type LoadForm int

const (
	// LoadShort is a load as a table or a flag writes it: "c=4", "r=2/s",
	// "r=2/s ≤8".
	LoadShort LoadForm = iota
	// LoadLong is a load in words, for sentences: "concurrency 4",
	// "2 req/s", "2 req/s (at most 8 in flight)".
	LoadLong
)

// Text writes the load alone, without its workload cell (for a table
// already grouped by workload, or a sentence that names it apart), in
// form f.
func (l Load) Text(f LoadForm) string {
	if l.Rate > 0 {
		rate := strconv.FormatFloat(l.Rate, 'g', -1, 64)
		switch {
		case f == LoadLong && l.MaxConcurrency > 0:
			return rate + " req/s (at most " + strconv.Itoa(l.MaxConcurrency) + " in flight)"
		case f == LoadLong:
			return rate + " req/s"
		case l.MaxConcurrency > 0:
			return "r=" + rate + "/s ≤" + strconv.Itoa(l.MaxConcurrency)
		}
		return "r=" + rate + "/s"
	}
	if f == LoadLong {
		return "concurrency " + strconv.Itoa(l.Concurrency)
	}
	return "c=" + strconv.Itoa(l.Concurrency)
}

// WorkloadLabel names a workload cell by its two length distributions as
// given on the command line: "in=128 out=64", "in=lognormal:8192,2048
// out=512".
func WorkloadLabel(prompt, output string) string {
	return "in=" + prompt + " out=" + output
}

// Token-count sources, best first: the server's own usage report, the
// server's tokenizer endpoint, a local tokenizer, or one token per chunk.
const (
	SourceUsage   = "usage"
	SourceServer  = "server_tokenize"
	SourceLocal   = "local_tokenizer"
	SourceChunks  = "chunks"
	SourceNone    = ""
	PhaseWarmup   = "warmup"
	PhaseMeasured = "measured"
)

// Chunk is one content-bearing piece of a stream: when its bytes were read
// (ns since the request was sent) and how many tokens it carried.
type Chunk struct {
	AtNS   int64 `json:"t"`
	Tokens int   `json:"n"`
	// Reasoning is true when the chunk carried reasoning text, not answer text.
	Reasoning bool `json:"r,omitempty"`
}

// Error classifies a failed request. Class is one of the Class* constants.
type Error struct {
	Class      string `json:"class"`
	Message    string `json:"message"`
	Status     int    `json:"status,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
}

// Error classes. They are part of the output contract (docs/OUTPUT.md).
const (
	ClassConnect      = "connect"         // DNS, refused, reset before a response
	ClassHTTP4xx      = "http_4xx"        // any 4xx except 429
	ClassRateLimited  = "http_429"        // 429, with Retry-After kept
	ClassHTTP5xx      = "http_5xx"        // any 5xx
	ClassTimeoutFirst = "timeout_first"   // no token before the deadline
	ClassTimeoutMid   = "timeout_stream"  // deadline passed mid-stream
	ClassStreamCut    = "stream_cut"      // body ended without the end marker
	ClassEmptyStream  = "empty_stream"    // the answer ended before any content-bearing token
	ClassMalformed    = "malformed_chunk" // a chunk that is not valid JSON/shape
	ClassNotStream    = "not_stream"      // body is not SSE/NDJSON when a stream was asked
	ClassServerError  = "server_error"    // an error event inside the stream
	ClassOOM          = "out_of_memory"   // the server said it ran out of memory
	ClassCancelled    = "cancelled"       // the run was interrupted
	ClassClient       = "client"          // building the request failed locally
)

// ServerTiming holds what the server itself reported about a request
// (Ollama's final chunk, llama.cpp's timings). Durations are nanoseconds.
//
// CachedTokens is nil when the server reported no cached prompt tokens,
// and points to 0 when it reported that none were cached: a hit rate
// needs the two apart. Records written before the difference was kept
// hold the member only when it was positive.
type ServerTiming struct {
	PromptEvalCount    int   `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64 `json:"prompt_eval_duration_ns,omitempty"`
	EvalCount          int   `json:"eval_count,omitempty"`
	EvalDuration       int64 `json:"eval_duration_ns,omitempty"`
	LoadDuration       int64 `json:"load_duration_ns,omitempty"`
	TotalDuration      int64 `json:"total_duration_ns,omitempty"`
	CachedTokens       *int  `json:"cached_tokens,omitempty"`
}

// Record is one request, successful or not.
type Record struct {
	Schema string `json:"schema"`
	// Point is the index of the load point in the run; Load describes it.
	Point int    `json:"point"`
	Load  Load   `json:"load"`
	ID    int64  `json:"id"`
	Phase string `json:"phase"`
	API   string `json:"api"`
	Model string `json:"model,omitempty"`
	// Session and Turn identify multi-turn conversations (0 when single-shot).
	Session int `json:"session,omitempty"`
	Turn    int `json:"turn,omitempty"`
	// TraceLine is the line of the replayed trace file this request is
	// (run --trace); 0 otherwise.
	TraceLine int64 `json:"trace_line,omitempty"`

	PromptTokensRequested int    `json:"prompt_tokens_requested"`
	OutputTokensRequested int    `json:"output_tokens_requested"`
	PromptTokens          int    `json:"prompt_tokens"`
	PromptTokensSource    string `json:"prompt_tokens_source"`
	OutputTokens          int    `json:"output_tokens"`
	OutputTokensSource    string `json:"output_tokens_source"`
	ReasoningTokens       int    `json:"reasoning_tokens,omitempty"`
	FinishReason          string `json:"finish_reason,omitempty"`

	// Instants, ns since the run epoch. Zero FirstTokenNS means no token came.
	ScheduledNS   int64 `json:"scheduled_ns"`
	SentNS        int64 `json:"sent_ns"`
	FirstTokenNS  int64 `json:"first_token_ns,omitempty"`
	FirstOutputNS int64 `json:"first_output_ns,omitempty"`
	EndNS         int64 `json:"end_ns"`

	Chunks []Chunk       `json:"chunks,omitempty"`
	Server *ServerTiming `json:"server,omitempty"`
	Error  *Error        `json:"error,omitempty"`
}

// Cached is the prompt tokens the server said it found in its prefix
// cache, and whether it said anything about them.
func (r *Record) Cached() (int, bool) {
	if r.Server == nil || r.Server.CachedTokens == nil {
		return 0, false
	}
	return *r.Server.CachedTokens, true
}

// OK reports whether the request completed without error.
func (r *Record) OK() bool { return r.Error == nil }
