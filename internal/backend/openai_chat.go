package backend

import "github.com/servebench/servebench/internal/record"

// openAIChat is POST /v1/chat/completions. Answer text arrives in
// choices[0].delta.content, reasoning text in delta.reasoning_content
// (vLLM, SGLang, llama.cpp) or delta.reasoning (Ollama, newer vLLM).
var openAIChat = api{
	name:   record.APIOpenAIChat,
	path:   "/v1/chat/completions",
	accept: "text/event-stream",
	wire:   &sseWire,
	body: func(c *Client, r *Request) (map[string]any, error) {
		msgs, err := chatMessages(r)
		if err != nil {
			return nil, err
		}
		m := c.openAIBody(r)
		m["messages"] = msgs
		return m, nil
	},
}
