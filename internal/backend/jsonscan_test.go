package backend

import (
	"bytes"
	"cmp"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Chunks as servers send them; the fast path must take them all.
var fastChunks = []string{
	// vLLM chat, with the role-only first chunk and a finish chunk.
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732880000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732880000,"model":"m","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732880000,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"length","stop_reason":null}]}`,
	// Reasoning deltas (vLLM/SGLang, then Ollama's OpenAI layer).
	`{"choices":[{"index":0,"delta":{"reasoning_content":"Let me think","content":null}}]}`,
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"hmm"},"finish_reason":null}],"system_fingerprint":"fp_ollama"}`,
	// llama.cpp chat, escapes and unicode.
	`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"\"quoted\"\n\t\u00e9\ud83d\ude00 \/"}}],"created":1,"id":"x","model":"m","system_fingerprint":"b1-abc","object":"chat.completion.chunk","timings":null}`,
	// Completions.
	`{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" Paris","logprobs":null,"finish_reason":null,"stop_reason":null}]}`,
	// Usage: vLLM's last chunk, with details, nulls and a choice (continuous usage stats).
	`{"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":512,"total_tokens":712,"completion_tokens":200,"prompt_tokens_details":null}}`,
	`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":3}}}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":null,"completion_tokens":-0,"completion_tokens_details":{"reasoning_tokens":null}}}`,
	`{"choices":[],"usage":{}}`,
	// Ollama lines.
	`{"model":"llama3.2","created_at":"2026-11-29T14:52:00.123Z","message":{"role":"assistant","content":"Hi"},"done":false}`,
	`{"model":"qwen3","created_at":"2026-11-29T14:52:00.123Z","message":{"role":"assistant","content":"","thinking":"Okay"},"done":false}`,
	`{"model":"llama3.2","created_at":"2026-11-29T14:52:00.123Z","response":" there","done":false}`,
}

func TestFastPathTaken(t *testing.T) {
	var s jsonScan
	for _, c := range fastChunks {
		var oa openAIText
		var ol ollamaText
		if !s.openAI([]byte(c), &oa) && !s.ollama([]byte(c), &ol) {
			t.Errorf("fast path declined %s", c)
		}
		checkFastOpenAI(t, []byte(c))
		checkFastOllama(t, []byte(c))
	}
	var oa openAIText
	if !s.openAI([]byte(fastChunks[5]), &oa) || string(oa.content) != "\"quoted\"\n\t\u00e9\U0001F600 /" {
		t.Errorf("unescaped %q", oa.content)
	}
}

func TestFastPathDeclines(t *testing.T) {
	// Chunks whose meaning needs encoding/json (or that are invalid).
	for _, c := range []string{
		`{"error":{"message":"x"}}`,
		`{"choices":[],"usage":{"completion_tokens":3},"usage":{"prompt_tokens":1}}`,
		`{"choices":[],"usage":{"completion_tokens":3,"completion_tokens":4}}`,
		`{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":2}}}`,
		`{"choices":[],"usage":{"completion_tokens":3.0}}`,
		`{"choices":[],"usage":{"completion_tokens":3e2}}`,
		`{"choices":[],"usage":{"completion_tokens":1234567890123456789}}`,
		`{"choices":[],"usage":{"completion_tokens":"3"}}`,
		`{"choices":[],"usage":{"Completion_tokens":3}}`,
		`{"choices":[],"usage":3}`,
		`{"choices":[],"timings":{"prompt_n":1}}`,
		`{"object":"error","message":"x"}`,
		`{"Choices":[{"text":"case-folded key"}]}`,
		`{"choices":[{"text":1}]}`,
		`{"choices":[{"text":"a"}],}`,
		`{"choices":[{"text":"a"}]} x`,
		`{"choices":[{"text":"\x"}]}`,
		`{"choices":[{"text":"a"}],"choices":[]}`,
		`{"choices":[{"text":"a"}],"n":01}`,
	} {
		var s jsonScan
		var oa openAIText
		if s.openAI([]byte(c), &oa) {
			t.Errorf("fast path took %s", c)
		}
	}
}

// FuzzFastPath holds the fast path to encoding/json: whenever it accepts
// a chunk, encoding/json accepts it too and reads the same fields.
func FuzzFastPath(f *testing.F) {
	for _, c := range fastChunks {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastOpenAI(t, data)
		checkFastOllama(t, data)
	})
}

func checkFastOpenAI(t *testing.T, data []byte) {
	var s jsonScan
	var got openAIText
	if !s.openAI(data, &got) {
		return
	}
	var c openAIChunk
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("fast path took %q; encoding/json: %v", data, err)
	}
	if c.Timings != nil || (len(c.Error) > 0 && string(c.Error) != "null") || c.Object == "error" {
		t.Fatalf("fast path took %q, which has timings or an error", data)
	}
	if got.usage != (c.Usage != nil) || c.Usage != nil && got.counts != c.Usage.counts() {
		t.Fatalf("%q: fast path read usage %v %+v, encoding/json %+v", data, got.usage, got.counts, c.Usage)
	}
	var want openAIText
	if len(c.Choices) > 0 {
		ch := c.Choices[0]
		want = openAIText{choice: true, text: []byte(ch.Text), content: []byte(ch.Delta.Content), finish: []byte(ch.FinishReason),
			reasoning: []byte(cmp.Or(ch.Delta.ReasoningContent, ch.Delta.Reasoning))}
	}
	gotReasoning := firstNonEmpty(got.reasoningContent, got.reasoning)
	if got.choice != want.choice || !bytes.Equal(got.text, want.text) || !bytes.Equal(got.content, want.content) ||
		!bytes.Equal(got.finish, want.finish) || !bytes.Equal(gotReasoning, want.reasoning) {
		t.Fatalf("%q: fast path read %+v, encoding/json %+v", data, got, want)
	}
}

func checkFastOllama(t *testing.T, data []byte) {
	var s jsonScan
	var got ollamaText
	if !s.ollama(data, &got) {
		return
	}
	var c ollamaChunk
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("fast path took %q; encoding/json: %v", data, err)
	}
	if c.Done || (len(c.Error) > 0 && string(c.Error) != "null") || c.EvalCount != nil || c.PromptEvalCount != nil {
		t.Fatalf("fast path took %q, which is done or has an error", data)
	}
	if string(got.response) != c.Response || string(got.thinking) != c.Thinking ||
		string(got.content) != c.Message.Content || string(got.msgThinking) != c.Message.Thinking {
		t.Fatalf("%q: fast path read %+v, encoding/json %+v", data, got, c)
	}
}

// TestFastPathAllocatesNothing: ordinary chunks and the usage chunk are read with no
// allocation, so per-chunk cost stays flat under thousands of streams.
func TestFastPathAllocatesNothing(t *testing.T) {
	var s jsonScan
	var oa openAIText
	var ol ollamaText
	chat := []byte(`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}]}`)
	nd := []byte(`{"model":"m","message":{"role":"assistant","content":" word"},"done":false}`)
	usage := []byte(`{"choices":[],"usage":{"prompt_tokens":512,"completion_tokens":200,"total_tokens":712,"prompt_tokens_details":{"cached_tokens":0}}}`)
	// Warm the destination buffers once; after that nothing may allocate.
	s.openAI(chat, &oa)
	s.ollama(nd, &ol)
	for name, f := range map[string]func(){
		"openai": func() {
			if !s.openAI(chat, &oa) {
				t.Fatal("fast path refused an ordinary chunk")
			}
		},
		"usage": func() {
			if !s.openAI(usage, &oa) || oa.counts.completion != 200 {
				t.Fatal("fast path refused a usage chunk")
			}
		},
		"ollama": func() {
			if !s.ollama(nd, &ol) {
				t.Fatal("fast path refused an ordinary line")
			}
		},
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations per chunk, want 0", name, n)
		}
	}
}

// TestKeyTablesMatchTags holds each scanner key table to the json tags
// of the struct encoding/json decodes the same object into: a field added
// to one and not the other fails here, so the fast path and encoding/json
// cannot disagree about which members exist.
func TestKeyTablesMatchTags(t *testing.T) {
	for _, tt := range []struct {
		name string
		typ  reflect.Type
		keys keys
	}{
		{"openAIChunk", reflect.TypeFor[openAIChunk](), openAIKeys},
		{"openAIChoice", reflect.TypeFor[openAIChoice](), choiceKeys},
		{"openAIDelta", reflect.TypeFor[openAIDelta](), deltaKeys},
		{"openAIUsage", reflect.TypeFor[openAIUsage](), usageKeys},
		{"openAIPromptDetails", reflect.TypeFor[openAIPromptDetails](), promptDetailsKeys},
		{"openAICompletionDetails", reflect.TypeFor[openAICompletionDetails](), completionDetailsKeys},
		{"ollamaChunk", reflect.TypeFor[ollamaChunk](), ollamaKeys},
		{"ollamaMessage", reflect.TypeFor[ollamaMessage](), messageKeys},
	} {
		var tags []string
		for f := range tt.typ.Fields() {
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "" || tag == "-" {
				t.Errorf("%s.%s has no json name", tt.name, f.Name)
			}
			tags = append(tags, tag)
		}
		table := slices.Clone(tt.keys)
		for i, k := range table {
			// find relies on these: a lower-case first letter, no gaps.
			if k == "" || k[0] < 'a' || k[0] > 'z' {
				t.Errorf("%s: key %d is %q", tt.name, i, k)
			}
		}
		slices.Sort(tags)
		slices.Sort(table)
		if !slices.Equal(tags, table) {
			t.Errorf("%s: json tags %q, scanner keys %q", tt.name, tags, table)
		}
	}
}

func TestKeysFind(t *testing.T) {
	ks := keys{"content", "reasoning_content", "reasoning"}
	for key, want := range map[string]int{
		"content":           0,
		"reasoning":         2,
		"reasoning_content": 1,
		"Content":           keyFolded,
		"REASONING":         keyFolded,
		"\u212aey":          keyFolded, // non-ASCII first byte: folded
		"conten\u017f":      keyUnknown,
		"reaſoning":         keyFolded, // ſ folds to s
		"role":              keyUnknown,
		"":                  keyUnknown,
	} {
		if got := ks.find([]byte(key)); got != want {
			t.Errorf("find(%q) = %d, want %d", key, got, want)
		}
	}
}
