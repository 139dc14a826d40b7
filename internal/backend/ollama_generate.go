package backend

import (
	"errors"
	"github.com/servebench/servebench/internal/record"
)

// ollamaGenerate is Ollama's POST /api/generate. Text arrives in
// response, reasoning text in thinking.
var ollamaGenerate = api{
	name:       record.APIOllamaGenerate,
	path:       "/api/generate",
	accept:     "application/x-ndjson",
	wire:       &ndjsonWire,
	needsModel: true,
	body: func(c *Client, r *Request) (map[string]any, error) {
		if r.Prompt == "" {
			if len(r.Messages) > 0 {
				return nil, errors.New("the ollama-generate API takes a prompt, not chat messages")
			}
			return nil, errNoPrompt
		}
		m := c.ollamaBody(r)
		m["prompt"] = r.Prompt
		return m, nil
	},
}
