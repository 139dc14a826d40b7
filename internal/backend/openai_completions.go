package backend

import (
	"errors"
	"github.com/servebench/servebench/internal/record"
)

// openAICompletions is POST /v1/completions. Text arrives in
// choices[0].text.
var openAICompletions = api{
	name:   record.APIOpenAICompletions,
	path:   "/v1/completions",
	accept: "text/event-stream",
	wire:   &sseWire,
	body: func(c *Client, r *Request) (map[string]any, error) {
		if r.Prompt == "" {
			if len(r.Messages) > 0 {
				return nil, errors.New("the openai-completions API takes a prompt, not chat messages")
			}
			return nil, errNoPrompt
		}
		m := c.openAIBody(r)
		m["prompt"] = r.Prompt
		return m, nil
	},
}
