package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sse"
)

// fixtureSteps reads a native stream fixture (testdata/native, whose README
// names the upstream source of each shape) and schedules its events
// gap apart, the first at gap.
func fixtureSteps(t *testing.T, name string, gap time.Duration) []step {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "native", name))
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	for i, e := range strings.SplitAfter(string(b), "\n\n") {
		if e != "" {
			steps = append(steps, step{time.Duration(i+1) * gap, e})
		}
	}
	return steps
}

// TestNativeStreams runs each engine's native stream, as the engine writes
// it, through the client: the content-bearing chunks and their times, the
// counts from the server's own report, the finish reason in the records'
// words, and the server's timings.
func TestNativeStreams(t *testing.T) {
	tests := []struct {
		name    string
		api     string
		fixture string
		// Expected: content chunks' write offsets (events are 30 ms apart),
		// the end, per-chunk tokens, counts, finish reason and server
		// timing.
		at     []time.Duration
		end    time.Duration
		tokens []int
		output int
		prompt int
		finish string
		server *record.ServerTiming
	}{
		{
			// The last event carries no text: it ends the stream with
			// tokens_predicted, tokens_evaluated, stop_type and timings.
			name: "llama.cpp /completion", api: record.APILlamaCppCompletion, fixture: "llamacpp_completion.sse",
			at: []time.Duration{30 * ms, 60 * ms, 90 * ms}, end: 120 * ms,
			tokens: []int{1, 1, 1}, output: 3, prompt: 12, finish: "length",
			server: &record.ServerTiming{PromptEvalCount: 8, PromptEvalDuration: 15_250_000,
				EvalCount: 3, EvalDuration: 30_500_000, CachedTokens: new(4)},
		},
		{
			// The end-of-sequence token is special: not text, not a chunk,
			// but counted in generated_tokens, so the first chunk carries
			// the extra token. TGI reports no timings.
			name: "TGI /generate_stream", api: record.APITGIGenerate, fixture: "tgi_generate_stream.sse",
			at: []time.Duration{30 * ms, 60 * ms, 90 * ms}, end: 120 * ms,
			tokens: []int{2, 1, 1}, output: 4, prompt: 12, finish: "stop",
		},
		{
			// Each event repeats the whole text; the chunk is what it adds.
			name: "SGLang /generate", api: record.APISGLangGenerate, fixture: "sglang_generate.sse",
			at: []time.Duration{30 * ms, 60 * ms, 90 * ms}, end: 120 * ms,
			tokens: []int{1, 1, 1}, output: 3, prompt: 12, finish: "length",
			server: &record.ServerTiming{TotalDuration: 49_122_571, CachedTokens: new(4)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := script{Steps: fixtureSteps(t, tt.fixture, 30*ms)}
			var rec *record.Record
			var reply strings.Builder
			for attempt := 1; ; attempt++ {
				reply.Reset()
				rec = do(t, sc, Options{API: tt.api}, &Request{Prompt: "hi", MaxTokens: 3, Reply: &reply})
				if rec.Error != nil {
					t.Fatalf("error %+v", rec.Error)
				}
				if len(rec.Chunks) != len(tt.at) {
					t.Fatalf("got %d chunks, want %d", len(rec.Chunks), len(tt.at))
				}
				late, early := timing(rec, tt.at, tt.at[0], tt.end)
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
			if got := reply.String(); got != "Hello wide world" {
				t.Errorf("answer text %q, want %q", got, "Hello wide world")
			}
			if got := tokens(rec.Chunks); !reflect.DeepEqual(got, tt.tokens) {
				t.Errorf("chunk tokens %v, want %v", got, tt.tokens)
			}
			got := [...]any{rec.OutputTokens, rec.OutputTokensSource, rec.PromptTokens, rec.PromptTokensSource, rec.FinishReason, rec.API}
			want := [...]any{tt.output, record.SourceUsage, tt.prompt, record.SourceUsage, tt.finish, tt.api}
			if got != want {
				t.Errorf("output, source, prompt, source, finish, api = %v, want %v", got, want)
			}
			if !reflect.DeepEqual(rec.Server, tt.server) {
				t.Errorf("server %+v, want %+v", rec.Server, tt.server)
			}
		})
	}
}

// TestNativeFailures: each engine's error event, and a stream cut before
// its end, are failures of the right class.
func TestNativeFailures(t *testing.T) {
	tests := []struct {
		name  string
		api   string
		body  string
		class string
		msg   string
	}{
		{"llama.cpp error event", record.APILlamaCppCompletion,
			ev(`{"index":0,"content":"a","tokens":[],"stop":false,"id_slot":-1,"tokens_predicted":1,"tokens_evaluated":3}`) +
				ev(`{"error":{"code":500,"message":"failed to decode the batch","type":"server_error"}}`),
			record.ClassServerError, "failed to decode the batch"},
		{"llama.cpp cut before stop", record.APILlamaCppCompletion,
			ev(`{"index":0,"content":"a","tokens":[],"stop":false,"id_slot":-1,"tokens_predicted":1,"tokens_evaluated":3}`),
			record.ClassStreamCut, `stream ended without "stop": true`},
		{"TGI error event", record.APITGIGenerate,
			"data:" + `{"index":1,"token":{"id":1,"text":"a","logprob":-0.1,"special":false},"generated_text":null,"details":null}` + "\n\n" +
				"data:" + `{"error":"Request failed during generation: Server error: CUDA out of memory.","error_type":"generation"}` + "\n\n",
			record.ClassOOM, "CUDA out of memory"},
		{"TGI cut", record.APITGIGenerate,
			"data:" + `{"index":1,"token":{"id":1,"text":"a","logprob":-0.1,"special":false},"generated_text":null,"details":null}` + "\n\n",
			record.ClassStreamCut, "stream ended without generated_text"},
		{"SGLang error event", record.APISGLangGenerate,
			ev(`{"error":{"message":"The input (9000 tokens) is longer than the model's context length (8192 tokens)."}}`) + done,
			record.ClassServerError, "longer than the model's context length"},
		{"SGLang abort", record.APISGLangGenerate,
			ev(`{"text":"a","output_ids":[1],"meta_info":{"id":"x","finish_reason":{"type":"abort","message":"Abort before prefill","status_code":503},"prompt_tokens":3,"completion_tokens":1,"cached_tokens":0}}`) + done,
			record.ClassServerError, "the server aborted the request: Abort before prefill"},
		{"SGLang [DONE] before text", record.APISGLangGenerate, done,
			record.ClassEmptyStream, "before any token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, script{Steps: []step{{0, tt.body}}}, Options{API: tt.api}, nil)
			if rec.Error == nil || rec.Error.Class != tt.class || !strings.Contains(rec.Error.Message, tt.msg) {
				t.Errorf("error %+v, want class %s with %q", rec.Error, tt.class, tt.msg)
			}
		})
	}
}

// TestNativeRequestBody: what each native API sends, where, and how the
// user's extra body merges into it.
func TestNativeRequestBody(t *testing.T) {
	tests := []struct {
		name string
		api  string
		o    Options
		req  Request
		want map[string]any
	}{
		{
			// n_predict and ignore_eos; the model names a router's model.
			name: "llama.cpp", api: record.APILlamaCppCompletion,
			o:   Options{IgnoreEOS: true, ExtraBody: map[string]any{"cache_prompt": false, "stream": false}},
			req: Request{Prompt: "hi", MaxTokens: 8},
			want: map[string]any{"model": "m", "prompt": "hi", "stream": true, "n_predict": 8.0, "ignore_eos": true,
				"cache_prompt": false},
		},
		{
			// details is always asked; TGI has no ignore_eos, so nothing
			// is sent for it; the user's parameters are kept.
			name: "TGI", api: record.APITGIGenerate,
			o:    Options{IgnoreEOS: true, ExtraBody: map[string]any{"parameters": map[string]any{"temperature": 0.5, "details": false}}},
			req:  Request{Prompt: "hi", MaxTokens: 8},
			want: map[string]any{"inputs": "hi", "parameters": map[string]any{"details": true, "max_new_tokens": 8.0, "temperature": 0.5}},
		},
		{
			name: "SGLang", api: record.APISGLangGenerate,
			o:   Options{IgnoreEOS: true, ExtraBody: map[string]any{"sampling_params": map[string]any{"temperature": 0.0}}},
			req: Request{Prompt: "hi", MaxTokens: 8},
			want: map[string]any{"text": "hi", "stream": true, "sampling_params": map[string]any{"max_new_tokens": 8.0,
				"ignore_eos": true, "min_new_tokens": 8.0, "temperature": 0.0}},
		},
		{
			name: "SGLang without a length", api: record.APISGLangGenerate,
			req:  Request{Prompt: "hi"},
			want: map[string]any{"text": "hi", "stream": true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]any
			var path string
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				b, _ := io.ReadAll(r.Body)
				json.Unmarshal(b, &got)
				http.Error(w, "no", http.StatusTeapot)
			})
			tt.o.API = tt.api
			do(t, h, tt.o, &tt.req)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("body\n got %v\nwant %v", got, tt.want)
			}
			if want := apis[tt.api].path; path != want {
				t.Errorf("path %q, want %q", path, want)
			}
		})
	}
	// None of them takes chat messages.
	for _, api := range []string{record.APILlamaCppCompletion, record.APITGIGenerate, record.APISGLangGenerate} {
		rec := do(t, script{}, Options{API: api}, &Request{Messages: []Message{{"user", "u"}}})
		if rec.Error == nil || rec.Error.Class != record.ClassClient || !strings.Contains(rec.Error.Message, "takes a prompt") {
			t.Errorf("%s with messages: error %+v", api, rec.Error)
		}
	}
}

// TestSGLangIncrementalText: a server that sends only the new text
// (--incremental-streaming-output) is read as well as one that repeats it.
func TestSGLangIncrementalText(t *testing.T) {
	s := testStreamFor(&sglangGenerate, nil)
	var reply strings.Builder
	s.reply = &reply
	for _, text := range []string{"Hello", " wide", " world"} {
		data, _ := json.Marshal(map[string]any{"text": text, "meta_info": map[string]any{"completion_tokens": 1}})
		s.chunks.event(s, sse.Event{Data: data, At: time.Now()}, false)
	}
	if got := reply.String(); got != "Hello wide world" || len(s.rec.Chunks) != 3 {
		t.Errorf("answer %q in %d chunks, want %q in 3", got, len(s.rec.Chunks), "Hello wide world")
	}
}

// fuzzNative feeds arbitrary events, one per line, to an API's decoder:
// it must not panic, and chunk shares must add up to the output count.
func fuzzNative(f *testing.F, a *api, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := testStreamFor(a, words{})
		for _, line := range bytes.Split(data, []byte("\n")) {
			if s.chunks.event(s, sse.Event{Data: line, At: time.Now()}, false) {
				break
			}
		}
		checkCounts(t, s)
	})
}

func nativeSeeds(f *testing.F, name string) []string {
	b, err := os.ReadFile(filepath.Join("testdata", "native", name))
	if err != nil {
		f.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if d, ok := strings.CutPrefix(l, "data:"); ok {
			lines = append(lines, strings.TrimSpace(d))
		}
	}
	return []string{strings.Join(lines, "\n")}
}

func FuzzLlamaCppChunk(f *testing.F) {
	fuzzNative(f, &llamaCppCompletion, append(nativeSeeds(f, "llamacpp_completion.sse"),
		`{"content":"a","stop":true,"tokens_predicted":-1,"timings":{"prompt_n":1e300}}`, `{"error":"x"}`)...)
}

func FuzzTGIChunk(f *testing.F) {
	fuzzNative(f, &tgiGenerate, append(nativeSeeds(f, "tgi_generate_stream.sse"),
		`{"token":{"text":"a"},"generated_text":"a","details":{"generated_tokens":0}}`, `{"error":"x","error_type":"y"}`)...)
}

func FuzzSGLangChunk(f *testing.F) {
	fuzzNative(f, &sglangGenerate, append(nativeSeeds(f, "sglang_generate.sse"),
		`{"text":"ab","meta_info":{"completion_tokens":1}}`+"\n"+`{"text":"a","meta_info":{"finish_reason":"stop","e2e_latency":-1}}`,
		`{"error":{"message":"x"}}`)...)
}

// TestNativePreflight: each engine's own endpoint names its model, and
// when it does not answer, the note says what its health endpoint said.
func TestNativePreflight(t *testing.T) {
	tests := []struct {
		name    string
		api     string
		model   string
		answers map[string]string // path → body; a path not here answers 404, "503:" bodies 503
		// want: the model used and a phrase of the note, or of the error.
		wantModel, wantNote, wantErr string
	}{
		{name: "TGI /info", api: record.APITGIGenerate,
			answers:   map[string]string{"/info": `{"model_id":"bigscience/bloom-560m","model_sha":"abc","model_dtype":"torch.float16","max_input_tokens":1024,"max_total_tokens":2048,"version":"3.3.4"}`},
			wantModel: "bigscience/bloom-560m"},
		{name: "TGI other model", api: record.APITGIGenerate, model: "x",
			answers: map[string]string{"/info": `{"model_id":"bigscience/bloom-560m"}`},
			wantErr: `does not serve model "x"; it serves: bigscience/bloom-560m`},
		{name: "SGLang served name", api: record.APISGLangGenerate, model: "qwen",
			answers:   map[string]string{"/get_model_info": `{"model_path":"/models/Qwen2.5-7B","tokenizer_path":"/models/Qwen2.5-7B","is_generation":true,"served_model_name":"qwen"}`},
			wantModel: "qwen"},
		{name: "SGLang path", api: record.APISGLangGenerate,
			answers:   map[string]string{"/get_model_info": `{"model_path":"Qwen/Qwen2.5-7B-Instruct","tokenizer_path":"Qwen/Qwen2.5-7B-Instruct","is_generation":true}`},
			wantModel: "Qwen/Qwen2.5-7B-Instruct"},
		{name: "llama.cpp /v1/models", api: record.APILlamaCppCompletion,
			answers:   map[string]string{"/v1/models": `{"object":"list","data":[{"id":"model.gguf","object":"model","owned_by":"llamacpp"}]}`},
			wantModel: "model.gguf"},
		{name: "llama.cpp loading", api: record.APILlamaCppCompletion, model: "m",
			answers:   map[string]string{"/v1/models": `503:{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`, "/health": `503:{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`},
			wantModel: "m", wantNote: "GET /v1/models answered HTTP 503; GET /health answered HTTP 503: Loading model"},
		{name: "TGI without /info", api: record.APITGIGenerate, model: "m",
			answers:   map[string]string{"/health": ``},
			wantModel: "m", wantNote: "GET /info answered HTTP 404; GET /health answered HTTP 200"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, ok := tt.answers[r.URL.Path]
			if !ok || r.Method != http.MethodGet {
				http.NotFound(w, r)
				return
			}
			if b, unavailable := strings.CutPrefix(body, "503:"); unavailable {
				w.WriteHeader(http.StatusServiceUnavailable)
				body = b
			}
			io.WriteString(w, body)
		}))
		tg := mustTarget(t, TargetOptions{URL: srv.URL})
		p, err := tg.Preflight(context.Background(), tt.api, tt.model)
		srv.Close()
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case p.Model != tt.wantModel || !strings.Contains(p.Note, tt.wantNote) || (tt.wantNote == "") != (p.Note == ""):
			t.Errorf("%s: model %q note %q; want %q and %q", tt.name, p.Model, p.Note, tt.wantModel, tt.wantNote)
		}
	}
}
