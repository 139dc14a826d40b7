package backend

import (
	"github.com/servebench/servebench/internal/record"
	"strings"
	"testing"
)

// Reply receives the answer text exactly as streamed, escapes decoded and
// reasoning left out, for every chat API.
func TestReplyCollectsAnswerText(t *testing.T) {
	openai := script{Steps: []step{
		{Data: chat(roleChunk)},
		{Data: chat(`{"reasoning_content":"let me think"}`)},
		{Data: content(`Hello`)},
		{Data: content(`, \"world\"\n`)},
		{Data: usage(3, 2)},
		{Data: done},
	}}
	ollama := script{Header: map[string]string{"Content-Type": "application/x-ndjson"}, Steps: []step{
		{Data: `{"message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}` + "\n"},
		{Data: `{"message":{"role":"assistant","content":"Hello"},"done":false}` + "\n"},
		{Data: `{"message":{"role":"assistant","content":", \"world\"\n"},"done":false}` + "\n"},
		{Data: `{"message":{"role":"assistant","content":""},"done":true,"eval_count":2,"prompt_eval_count":3}` + "\n"},
	}}
	for _, tt := range []struct {
		api string
		srv script
	}{{record.APIOpenAIChat, openai}, {record.APIOllamaChat, ollama}} {
		var reply strings.Builder
		rec := do(t, tt.srv, Options{API: tt.api}, &Request{Prompt: "hi", MaxTokens: 2, Reply: &reply})
		if rec.Error != nil {
			t.Fatalf("%s: %+v", tt.api, rec.Error)
		}
		if got, want := reply.String(), "Hello, \"world\"\n"; got != want {
			t.Errorf("%s: reply %q, want %q", tt.api, got, want)
		}
	}
}
