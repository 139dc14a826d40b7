package backend

import (
	"errors"
	"github.com/servebench/servebench/internal/record"
	"maps"
)

// api describes one streaming API: where it lives, what it asks to be
// answered with, how its request body is built, and the wire its answer
// streams in.
type api struct {
	name       string
	path       string
	accept     string
	wire       *wire
	needsModel bool
	body       func(c *Client, r *Request) (map[string]any, error)
}

var apis = map[string]*api{
	record.APIOpenAIChat:         &openAIChat,
	record.APIOpenAICompletions:  &openAICompletions,
	record.APIOllamaChat:         &ollamaChat,
	record.APIOllamaGenerate:     &ollamaGenerate,
	record.APILlamaCppCompletion: &llamaCppCompletion,
	record.APITGIGenerate:        &tgiGenerate,
	record.APISGLangGenerate:     &sglangGenerate,
}

var errNoPrompt = errors.New("the request has no prompt")

// newBody starts a body from the user's extra fields; the caller then sets
// its own, which win.
func (c *Client) newBody() map[string]any {
	m := make(map[string]any, len(c.extra)+8)
	maps.Copy(m, c.extra)
	return m
}

// chatMessages returns r's messages, or its prompt as one user message.
func chatMessages(r *Request) ([]Message, error) {
	if len(r.Messages) > 0 {
		return r.Messages, nil
	}
	if r.Prompt == "" {
		return nil, errNoPrompt
	}
	return []Message{{Role: "user", Content: r.Prompt}}, nil
}
