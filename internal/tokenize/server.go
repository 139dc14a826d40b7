package tokenize

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/record"
)

// Shape names the request and response format a server's /tokenize speaks.
type Shape string

// The /tokenize shapes servebench knows.
const (
	// ShapeVLLM: {model, prompt, add_special_tokens} or {model, messages,
	// add_generation_prompt} → {count, max_model_len, tokens}.
	ShapeVLLM Shape = "vllm"
	// ShapeSGLang: {model, prompt, add_special_tokens} → {tokens, count};
	// the vLLM request shape without chat messages (Detect also reports it
	// for a vLLM whose model has no chat template).
	ShapeSGLang Shape = "sglang"
	// ShapeLlamaCpp: {content, add_special} → {tokens}.
	ShapeLlamaCpp Shape = "llamacpp"
	// ShapeTGI: {inputs} → [{id, text, start, stop}, ...].
	ShapeTGI Shape = "tgi"
)

// Server counts tokens with the server's own tokenizer over HTTP. Build one
// with Detect, or fill the fields when the shape is known. Safe for
// concurrent use.
type Server struct {
	// Target is the server: its base URL, headers (credentials) and TLS,
	// and the redactor applied to everything it answers.
	Target *backend.Target
	Model  string
	Shape  Shape
	// AddSpecial asks the server to count special tokens (a BOS) as it does
	// for a completions request; Detect sets it.
	AddSpecial bool
	// MaxModelLen is the model's context length when the server says it;
	// zero when unknown.
	MaxModelLen int
	// Timeout bounds one count request; zero means DefaultCountTimeout.
	Timeout time.Duration
}

// DefaultCountTimeout bounds one /tokenize call: tokenizing even a 128k-token
// prompt takes a server well under a second, so anything longer is a stall.
const DefaultCountTimeout = 10 * time.Second

// maxTokenizeBody caps a /tokenize response: the token list of a 128k-token
// prompt is about 1 MB of JSON.
const maxTokenizeBody = 32 << 20

// Count returns the number of tokens the server's tokenizer gives text.
func (s *Server) Count(ctx context.Context, text string) (int, error) {
	switch s.Shape {
	case ShapeVLLM, ShapeSGLang:
		return s.countOpenAI(ctx, vllmRequest{Model: s.Model, Prompt: &text, AddSpecialTokens: &s.AddSpecial})
	case ShapeLlamaCpp:
		var resp struct {
			Tokens []json.RawMessage `json:"tokens"`
		}
		err := s.post(ctx, map[string]any{"content": text, "add_special": s.AddSpecial}, &resp)
		if err == nil && resp.Tokens == nil {
			err = errors.New("llama.cpp /tokenize: response has no tokens")
		}
		return len(resp.Tokens), err
	case ShapeTGI:
		var resp []json.RawMessage
		err := s.post(ctx, map[string]any{"inputs": text}, &resp)
		return len(resp), err
	}
	return 0, fmt.Errorf("tokenize: unknown server shape %q", s.Shape)
}

// CountChat returns the length of the prompt the server builds from
// messages, chat template and generation prompt included. ok is false when
// the server's /tokenize cannot take messages (only vLLM's can).
func (s *Server) CountChat(ctx context.Context, messages []Message) (n int, ok bool, err error) {
	if s.Shape != ShapeVLLM {
		return 0, false, nil
	}
	t := true
	n, err = s.countOpenAI(ctx, vllmRequest{Model: s.Model, Messages: messages, AddGenerationPrompt: &t})
	return n, err == nil, err
}

// Name returns "server:" and the shape.
func (s *Server) Name() string { return "server:" + string(s.Shape) }

// Source returns record.SourceServer.
func (s *Server) Source() string { return record.SourceServer }

// MaxTokens returns MaxModelLen.
func (s *Server) MaxTokens() int { return s.MaxModelLen }

type vllmRequest struct {
	Model               string    `json:"model,omitempty"`
	Prompt              *string   `json:"prompt,omitempty"`
	Messages            []Message `json:"messages,omitempty"`
	AddSpecialTokens    *bool     `json:"add_special_tokens,omitempty"`
	AddGenerationPrompt *bool     `json:"add_generation_prompt,omitempty"`
}

type vllmResponse struct {
	Count       *int  `json:"count"`
	MaxModelLen int   `json:"max_model_len"`
	Tokens      []int `json:"tokens"`
}

func (s *Server) countOpenAI(ctx context.Context, req vllmRequest) (int, error) {
	var resp vllmResponse
	if err := s.post(ctx, req, &resp); err != nil {
		return 0, err
	}
	if resp.Count != nil {
		return *resp.Count, nil
	}
	if resp.Tokens != nil {
		return len(resp.Tokens), nil
	}
	return 0, fmt.Errorf("%s /tokenize: response has neither count nor tokens", s.Shape)
}

// StatusError is a non-2xx answer from /tokenize.
type StatusError struct {
	Status int
	Body   string // the start of the response body
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("/tokenize answered HTTP %d: %s", e.Status, e.Body)
}

// post sends body as JSON to BaseURL/tokenize and decodes the answer into out.
func (s *Server) post(ctx context.Context, body, out any) error {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultCountTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := s.Target.NewRequest(ctx, http.MethodPost, "/tokenize", bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return s.do(req, out)
}

// do sends req and decodes its JSON answer into out. Whatever the server
// says in an error loses the target's credentials.
func (s *Server) do(req *http.Request, out any) error {
	resp, err := s.Target.Client().Do(req)
	if err != nil {
		return &transportError{err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenizeBody+1))
	if err != nil {
		return fmt.Errorf("%s: reading response: %w", req.URL.Path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Status: resp.StatusCode, Body: clip(s.Target.Redact(string(raw)), 200)}
	}
	if len(raw) > maxTokenizeBody {
		return fmt.Errorf("%s: response larger than %d bytes", req.URL.Path, maxTokenizeBody)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: unexpected response %q: %w", req.URL.Path, clip(s.Target.Redact(string(raw)), 120), err)
	}
	return nil
}

// transportError is a failure to reach the server at all (refused, reset,
// timed out), as opposed to an answer Detect does not recognise.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
