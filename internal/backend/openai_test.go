package backend

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// slack is how late a chunk may be read after the server wrote it (more
// under the race detector). Lower bounds are exact: a chunk cannot be read
// before it was written.
var slack = map[bool]time.Duration{false: 15 * time.Millisecond, true: 40 * time.Millisecond}[raceEnabled]

// attempts absorbs scheduler noise on a loaded machine: a timing test
// fails only if every attempt reads some chunk late.
const attempts = 5

const ms = time.Millisecond

func TestStreamTiming(t *testing.T) {
	tests := []struct {
		name    string
		api     string
		counter TokenCounter
		steps   []step
		// Expected: content chunks' write offsets, first answer chunk's
		// index, per-chunk tokens, counts and their sources.
		at              []time.Duration
		firstOutput     int
		end             time.Duration
		tokens          []int
		output          int
		outSource       string
		prompt          int
		promptSource    string
		reasoning       int
		reasoningChunks []bool
		finish          string
	}{
		{
			// A role-only chunk and an empty delta are not tokens; a
			// two-word chunk gets two of the server's four tokens.
			name: "chat", api: record.APIOpenAIChat, counter: words{},
			steps: []step{
				{0, chat(roleChunk)}, {50 * ms, content("Hello")}, {70 * ms, content(" wide world")},
				{90 * ms, chat(`{}`)}, {110 * ms, content(" again")},
				{130 * ms, ev(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`) + usage(12, 4) + done},
			},
			at: []time.Duration{50 * ms, 70 * ms, 110 * ms}, end: 130 * ms,
			tokens: []int{1, 2, 1}, output: 4, outSource: record.SourceUsage, prompt: 12, promptSource: record.SourceUsage,
			finish: "stop",
		},
		{
			// Without a local tokenizer the extra token goes to the first
			// chunk (largest remainder, ties to the earliest).
			name: "chat no tokenizer", api: record.APIOpenAIChat,
			steps: []step{
				{0, chat(roleChunk)}, {50 * ms, content("Hello")}, {70 * ms, content(" wide world")},
				{90 * ms, content(" again") + usage(12, 4) + done},
			},
			at: []time.Duration{50 * ms, 70 * ms, 90 * ms}, end: 90 * ms,
			tokens: []int{2, 1, 1}, output: 4, outSource: record.SourceUsage, prompt: 12, promptSource: record.SourceUsage,
		},
		{
			// TTFT is the first reasoning token; the first output token is
			// the first answer token. Reported reasoning tokens are spread
			// over the reasoning chunks only.
			name: "reasoning", api: record.APIOpenAIChat,
			steps: []step{
				{0, chat(roleChunk)}, {40 * ms, chat(`{"reasoning_content":"think"}`)},
				{60 * ms, chat(`{"reasoning_content":" more"}`)}, {80 * ms, content("Answer")},
				{100 * ms, content(" done")},
				{120 * ms, ev(`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":5,"completion_tokens_details":{"reasoning_tokens":3}}}`) + done},
			},
			at: []time.Duration{40 * ms, 60 * ms, 80 * ms, 100 * ms}, firstOutput: 2, end: 120 * ms,
			tokens: []int{2, 1, 1, 1}, output: 5, outSource: record.SourceUsage, prompt: 7, promptSource: record.SourceUsage,
			reasoning: 3, reasoningChunks: []bool{true, true, false, false},
		},
		{
			// No usage: one token per chunk.
			name: "completions chunks", api: record.APIOpenAICompletions,
			steps: []step{
				{30 * ms, ev(`{"choices":[{"index":0,"text":"a b","finish_reason":null}]}`)},
				{50 * ms, ev(`{"choices":[{"index":0,"text":" c","finish_reason":"length"}]}`) + done},
			},
			at: []time.Duration{30 * ms, 50 * ms}, end: 50 * ms,
			tokens: []int{1, 1}, output: 2, outSource: record.SourceChunks, finish: "length",
		},
		{
			// No usage, a local tokenizer: it counts the whole text.
			name: "completions local", api: record.APIOpenAICompletions, counter: words{},
			steps: []step{
				{30 * ms, ev(`{"choices":[{"index":0,"text":"a b","finish_reason":null}]}`)},
				{50 * ms, ev(`{"choices":[{"index":0,"text":" c","finish_reason":null}]}`) + done},
			},
			at: []time.Duration{30 * ms, 50 * ms}, end: 50 * ms,
			tokens: []int{2, 1}, output: 3, outSource: record.SourceLocal,
		},
		{
			// Ollama's NDJSON: thinking, then content, then the done line
			// with its counts.
			name: "ollama chat", api: record.APIOllamaChat,
			steps: []step{
				{40 * ms, `{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}` + "\n"},
				{60 * ms, `{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}` + "\n"},
				{80 * ms, `{"model":"m","message":{"role":"assistant","content":" there"},"done":false}` + "\n"},
				{100 * ms, `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":101000000,"load_duration":1000000,"prompt_eval_count":9,"prompt_eval_duration":30000000,"eval_count":3,"eval_duration":60000000}` + "\n"},
			},
			at: []time.Duration{40 * ms, 60 * ms, 80 * ms}, firstOutput: 1, end: 100 * ms,
			tokens: []int{1, 1, 1}, output: 3, outSource: record.SourceUsage, prompt: 9, promptSource: record.SourceUsage,
			reasoning: 1, reasoningChunks: []bool{true, false, false}, finish: "stop",
		},
		{
			name: "ollama generate", api: record.APIOllamaGenerate,
			steps: []step{
				{30 * ms, `{"model":"m","response":"Hi","done":false}` + "\n"},
				{50 * ms, `{"model":"m","response":" you","done":false}` + "\n"},
				{70 * ms, `{"model":"m","response":"","done":true,"done_reason":"length","context":[1,2,3],"eval_count":5,"prompt_eval_count":4}` + "\n"},
			},
			at: []time.Duration{30 * ms, 50 * ms}, end: 70 * ms,
			tokens: []int{3, 2}, output: 5, outSource: record.SourceUsage, prompt: 4, promptSource: record.SourceUsage,
			finish: "length",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := script{Steps: tt.steps}
			if tt.api == record.APIOllamaChat || tt.api == record.APIOllamaGenerate {
				sc.Header = map[string]string{"Content-Type": "application/x-ndjson"}
			}
			// A loaded machine may read a chunk late, so lateness is
			// retried; no attempt may read one early.
			var rec *record.Record
			for attempt := 1; ; attempt++ {
				rec = do(t, sc, Options{API: tt.api, Counter: tt.counter}, nil)
				if rec.Error != nil {
					t.Fatalf("error %+v", rec.Error)
				}
				if len(rec.Chunks) != len(tt.at) {
					t.Fatalf("got %d chunks, want %d", len(rec.Chunks), len(tt.at))
				}
				late, early := timing(rec, tt.at, tt.at[tt.firstOutput], tt.end)
				if early != "" {
					t.Fatal(early)
				}
				if late == "" {
					break
				}
				if attempt == attempts {
					t.Fatalf("late on %d attempts, e.g. %s", attempts, late)
				}
			}
			if got := tokens(rec.Chunks); !reflect.DeepEqual(got, tt.tokens) {
				t.Errorf("chunk tokens %v, want %v", got, tt.tokens)
			}
			got := [...]any{rec.OutputTokens, rec.OutputTokensSource, rec.PromptTokens, rec.PromptTokensSource, rec.ReasoningTokens, rec.FinishReason}
			want := [...]any{tt.output, tt.outSource, tt.prompt, tt.promptSource, tt.reasoning, tt.finish}
			if got != want {
				t.Errorf("output, source, prompt, source, reasoning, finish = %v, want %v", got, want)
			}
			if tt.reasoningChunks != nil {
				var r []bool
				for _, c := range rec.Chunks {
					r = append(r, c.Reasoning)
				}
				if !reflect.DeepEqual(r, tt.reasoningChunks) {
					t.Errorf("reasoning chunks %v, want %v", r, tt.reasoningChunks)
				}
			}
		})
	}
}

// timing checks a record against the scripted write offsets: early
// describes a chunk read before it was written (a bug), late one read
// more than slack after.
func timing(rec *record.Record, at []time.Duration, firstOutput, end time.Duration) (late, early string) {
	check := func(what string, got, want time.Duration) {
		switch {
		case got < want && early == "":
			early = fmt.Sprintf("%s at %v, before its write at %v", what, got, want)
		case got > want+slack && late == "":
			late = fmt.Sprintf("%s at %v, want %v (+%v)", what, got, want, slack)
		}
	}
	check("first token", time.Duration(rec.FirstTokenNS-rec.SentNS), at[0])
	check("first output", time.Duration(rec.FirstOutputNS-rec.SentNS), firstOutput)
	check("end", time.Duration(rec.EndNS-rec.SentNS), end)
	for i, c := range rec.Chunks {
		check(fmt.Sprint("chunk ", i), time.Duration(c.AtNS), at[i])
	}
	if first := time.Duration(rec.FirstTokenNS - rec.SentNS); time.Duration(rec.Chunks[0].AtNS) != first && early == "" {
		early = fmt.Sprintf("first chunk at %v, first token at %v", time.Duration(rec.Chunks[0].AtNS), first)
	}
	return late, early
}

func TestServerTiming(t *testing.T) {
	// llama.cpp reports timings in its last chunk; vLLM reports cached
	// prompt tokens in usage.
	sc := script{Steps: []step{{0, content("a") +
		ev(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":8}},"timings":{"prompt_n":2,"prompt_ms":1.5,"predicted_n":1,"predicted_ms":12.25,"cache_n":8}}`) +
		done}}}
	rec := do(t, sc, Options{}, nil)
	want := record.ServerTiming{PromptEvalCount: 2, PromptEvalDuration: 1_500_000, EvalCount: 1, EvalDuration: 12_250_000, CachedTokens: new(8)}
	if rec.Error != nil || !sameTiming(rec.Server, &want) {
		t.Errorf("server %+v, error %+v; want %+v", rec.Server, rec.Error, want)
	}

	// Ollama's done line.
	sc = script{Header: map[string]string{"Content-Type": "application/x-ndjson"}, Steps: []step{{0,
		`{"response":"a","done":false}` + "\n" + `{"response":"","done":true,"total_duration":5,"load_duration":1,"prompt_eval_count":3,"prompt_eval_duration":2,"eval_count":1,"eval_duration":4}` + "\n"}}}
	rec = do(t, sc, Options{API: record.APIOllamaGenerate}, nil)
	want = record.ServerTiming{PromptEvalCount: 3, PromptEvalDuration: 2, EvalCount: 1, EvalDuration: 4, LoadDuration: 1, TotalDuration: 5}
	if rec.Error != nil || !sameTiming(rec.Server, &want) {
		t.Errorf("server %+v, error %+v; want %+v", rec.Server, rec.Error, want)
	}
}

// sameTiming compares two server timings by value, cached count included.
func sameTiming(a, b *record.ServerTiming) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.CachedTokens, y.CachedTokens = nil, nil
	ca, oka := (&record.Record{Server: a}).Cached()
	cb, okb := (&record.Record{Server: b}).Cached()
	return x == y && ca == cb && oka == okb
}

// TestCachedTokensReported: the usage shapes of the engines, each read
// as a cached count reported (0 included) or not reported at all.
func TestCachedTokensReported(t *testing.T) {
	tests := []struct {
		name     string
		last     string // the last chunk before [DONE]
		want     int
		reported bool
	}{
		// OpenAI sends prompt_tokens_details with 0 when nothing was cached.
		{"openai zero", `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}}`, 0, true},
		// vLLM with --enable-prompt-tokens-details, a hit.
		{"vllm hit", `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":6}}}`, 6, true},
		// vLLM leaves the details out when nothing was cached.
		{"vllm miss", `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1}}`, 0, false},
		// SGLang (--enable-cache-report) sends null details when nothing was
		// cached, and a top-level reasoning_tokens.
		{"sglang miss", `{"choices":[],"usage":{"prompt_tokens":10,"total_tokens":11,"completion_tokens":1,"prompt_tokens_details":null,"reasoning_tokens":0}}`, 0, false},
		{"sglang hit", `{"choices":[],"usage":{"prompt_tokens":10,"total_tokens":11,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":4},"reasoning_tokens":0}}`, 4, true},
		// llama.cpp's timings without cache_n (older servers): not reported.
		{"llama.cpp old", `{"choices":[],"timings":{"prompt_n":2,"prompt_ms":1,"predicted_n":1,"predicted_ms":1}}`, 0, false},
		// llama.cpp's timings with cache_n 0.
		{"llama.cpp zero", `{"choices":[],"timings":{"prompt_n":2,"prompt_ms":1,"predicted_n":1,"predicted_ms":1,"cache_n":0}}`, 0, true},
	}
	for _, tt := range tests {
		sc := script{Steps: []step{{0, content("a") + ev(tt.last) + done}}}
		rec := do(t, sc, Options{}, nil)
		if got, ok := rec.Cached(); rec.Error != nil || got != tt.want || ok != tt.reported {
			t.Errorf("%s: cached %d, reported %v (error %v); want %d, %v", tt.name, got, ok, rec.Error, tt.want, tt.reported)
		}
	}
}

func TestRequestBody(t *testing.T) {
	tests := []struct {
		name string
		api  string
		o    Options
		req  Request
		want map[string]any
	}{
		{
			// The stream flags and max_tokens win over the user's extra
			// body; other extra fields pass through.
			name: "openai chat", api: record.APIOpenAIChat,
			o:   Options{IgnoreEOS: true, ExtraBody: map[string]any{"temperature": 0.5, "stream": false, "max_tokens": 1}},
			req: Request{Prompt: "hi", MaxTokens: 32},
			want: map[string]any{"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true},
				"max_tokens": 32.0, "ignore_eos": true, "min_tokens": 32.0, "temperature": 0.5,
				"messages": []any{map[string]any{"role": "user", "content": "hi"}}},
		},
		{
			// ignore_eos without max_tokens would run to the context length.
			name: "ignore_eos needs max_tokens", api: record.APIOpenAICompletions,
			o:   Options{IgnoreEOS: true},
			req: Request{Prompt: "hi"},
			want: map[string]any{"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true},
				"prompt": "hi"},
		},
		{
			name: "openai completions", api: record.APIOpenAICompletions,
			req: Request{Prompt: "hi", MaxTokens: 8},
			want: map[string]any{"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true},
				"max_tokens": 8.0, "prompt": "hi"},
		},
		{
			// Ollama has no ignore_eos: nothing is sent for it; the user's
			// options are kept next to num_predict.
			name: "ollama chat", api: record.APIOllamaChat,
			o:   Options{IgnoreEOS: true, ExtraBody: map[string]any{"options": map[string]any{"temperature": 0.0}}},
			req: Request{Messages: []Message{{"system", "s"}, {"user", "u"}}, MaxTokens: 8},
			want: map[string]any{"model": "m", "stream": true, "options": map[string]any{"num_predict": 8.0, "temperature": 0.0},
				"messages": []any{map[string]any{"role": "system", "content": "s"}, map[string]any{"role": "user", "content": "u"}}},
		},
		{
			name: "ollama generate", api: record.APIOllamaGenerate,
			req:  Request{Prompt: "hi", MaxTokens: 8},
			want: map[string]any{"model": "m", "stream": true, "options": map[string]any{"num_predict": 8.0}, "prompt": "hi"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]any
			var path, auth, accept, extra string
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path, auth, accept, extra = r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Accept"), r.Header.Get("X-Extra")
				b, _ := io.ReadAll(r.Body)
				json.Unmarshal(b, &got)
				http.Error(w, "no", http.StatusTeapot)
			})
			tt.o.API = tt.api
			tt.o.Headers = http.Header{"X-Extra": {"1"}}
			do(t, h, tt.o, &tt.req)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("body\n got %v\nwant %v", got, tt.want)
			}
			if want := apis[tt.api].path; path != want {
				t.Errorf("path %q, want %q", path, want)
			}
			if auth != "Bearer "+testKey || accept != apis[tt.api].accept || extra != "1" {
				t.Errorf("headers: Authorization %q, Accept %q, X-Extra %q", auth, accept, extra)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		o    Options
		url  string // "" when New must fail
		host string
	}{
		{Options{BaseURL: "http://h:8000", API: record.APIOpenAIChat}, "http://h:8000/v1/chat/completions", ""},
		// A trailing /v1 and slashes are tolerated; a path prefix is kept.
		{Options{BaseURL: "https://h/proxy/v1/", API: record.APIOpenAICompletions}, "https://h/proxy/v1/completions", ""},
		{Options{BaseURL: "http://h:11434/", API: record.APIOllamaChat, Model: "llama3", Headers: http.Header{"Host": {"x"}}}, "http://h:11434/api/chat", "x"},
		// Ollama needs a model; unknown API; bad URLs; negative timeout.
		{Options{BaseURL: "http://h:11434", API: record.APIOllamaGenerate}, "", ""},
		{Options{BaseURL: "http://h", API: "tgi"}, "", ""},
		{Options{BaseURL: "h:8000", API: record.APIOpenAIChat}, "", ""},
		{Options{BaseURL: "http://h/?x=1", API: record.APIOpenAIChat}, "", ""},
		{Options{BaseURL: "http://h", API: record.APIOpenAIChat, Timeout: -1}, "", ""},
	}
	for _, tt := range tests {
		c, err := New(tt.o)
		switch {
		case tt.url == "" && err == nil:
			t.Errorf("New(%+v) succeeded, want an error", tt.o)
		case tt.url != "" && err != nil:
			t.Errorf("New(%+v): %v", tt.o, err)
		case err == nil && (c.url != tt.url || c.host != tt.host || c.timeout != DefaultTimeout):
			t.Errorf("New(%+v): url %q host %q timeout %v, want %q %q %v", tt.o, c.url, c.host, c.timeout, tt.url, tt.host, DefaultTimeout)
		}
	}
}
