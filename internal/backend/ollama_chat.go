package backend

import "github.com/servebench/servebench/internal/record"

// ollamaChat is Ollama's POST /api/chat. Text arrives in message.content,
// reasoning text in message.thinking.
var ollamaChat = api{
	name:       record.APIOllamaChat,
	path:       "/api/chat",
	accept:     "application/x-ndjson",
	wire:       &ndjsonWire,
	needsModel: true,
	body: func(c *Client, r *Request) (map[string]any, error) {
		msgs, err := chatMessages(r)
		if err != nil {
			return nil, err
		}
		m := c.ollamaBody(r)
		m["messages"] = msgs
		return m, nil
	},
}
