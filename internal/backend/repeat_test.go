package backend

import (
	"bytes"
	"testing"
)

const repeatPattern = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}`

func TestRepeatChunk(t *testing.T) {
	for _, tt := range []struct {
		name, pattern, chunk string
		taken                bool
	}{
		{"another token", repeatPattern, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" world é"},"logprobs":null,"finish_reason":null}]}`, true},
		{"an empty token", repeatPattern, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":null}]}`, true},
		{"reasoning", `{"choices":[{"index":0,"delta":{"content":"","reasoning":"hmm"}}]}`, `{"choices":[{"index":0,"delta":{"content":"","reasoning":"so"}}]}`, true},
		{"completions", `{"choices":[{"index":0,"text":" Paris","finish_reason":null}]}`, `{"choices":[{"index":0,"text":" is","finish_reason":null}]}`, true},
		// Everything below is left to the scanner.
		{"an escape", repeatPattern, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a\nb"},"logprobs":null,"finish_reason":null}]}`, false},
		{"a quote closing early", repeatPattern, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a","reasoning":"b"},"logprobs":null,"finish_reason":null}]}`, false},
		{"another id", repeatPattern, `{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":null}]}`, false},
		{"a finish reason", repeatPattern, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop"}]}`, false},
		{"invalid UTF-8", repeatPattern, "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\"},\"logprobs\":null,\"finish_reason\":null}]}", false},
		{"an escaped pattern", `{"choices":[{"delta":{"content":"a\tb"}}]}`, `{"choices":[{"delta":{"content":"c"}}]}`, false},
		{"two texts in the pattern", `{"choices":[{"text":"a","delta":{"content":"b"}}]}`, `{"choices":[{"text":"a","delta":{"content":"c"}}]}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r repeatChunk
			var s jsonScan
			var out openAIText
			pattern := []byte(tt.pattern)
			if !s.openAI(pattern, &out) {
				t.Fatal("the scanner declined the pattern")
			}
			r.learn(pattern, &out)
			got := r.match([]byte(tt.chunk), &out)
			if got != tt.taken {
				t.Fatalf("taken %v, want %v", got, tt.taken)
			}
			if got {
				checkRepeat(t, []byte(tt.chunk), &out)
			}
		})
	}
}

// checkRepeat wants the scanner to read chunk exactly as the pattern did.
func checkRepeat(t *testing.T, chunk []byte, got *openAIText) {
	t.Helper()
	var s jsonScan
	var want openAIText
	if !s.openAI(chunk, &want) {
		t.Fatalf("pattern read %q, which the scanner declines", chunk)
	}
	if got.choice != want.choice || !bytes.Equal(got.text, want.text) || !bytes.Equal(got.content, want.content) ||
		!bytes.Equal(got.reasoningContent, want.reasoningContent) || !bytes.Equal(got.reasoning, want.reasoning) ||
		!bytes.Equal(got.finish, want.finish) {
		t.Fatalf("%q: pattern read %+v, the scanner %+v", chunk, got, want)
	}
}

// FuzzRepeatChunk holds the pattern to the scanner: whenever a chunk
// matches the pattern learnt from another, the scanner reads it the same.
func FuzzRepeatChunk(f *testing.F) {
	for _, c := range fastChunks {
		f.Add([]byte(c), []byte(c))
	}
	f.Add([]byte(repeatPattern), []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}]}`))
	f.Fuzz(func(t *testing.T, pattern, chunk []byte) {
		var s jsonScan
		var out openAIText
		if !s.openAI(pattern, &out) {
			return
		}
		var r repeatChunk
		r.learn(pattern, &out)
		if r.match(chunk, &out) {
			checkRepeat(t, chunk, &out)
		}
	})
}
