package tokenize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
)

// DetectTimeout bounds each probe Detect sends: a tokenizer answers a
// two-word request in milliseconds, so a slow answer means "not here".
const DetectTimeout = 3 * time.Second

// probeText is what Detect asks servers to tokenize.
const probeText = "Hello world"

// Detect finds out which /tokenize shape the target speaks, trying
// the vLLM/SGLang request first, then llama.cpp's, then TGI's (a few short
// requests). It returns nil and no error when the server has no /tokenize
// (it answers 404, as Ollama does), and an error when the server cannot be
// reached or answers in no known shape.
func Detect(ctx context.Context, t *backend.Target, model string) (*Server, error) {
	s := &Server{Target: t, Model: model, AddSpecial: true, Timeout: DetectTimeout}
	var errs []error
	for _, probe := range []func(context.Context, *Server) (bool, error){probeOpenAI, probeLlamaCpp, probeTGI} {
		ok, err := probe(ctx, s)
		if ok {
			s.Timeout = 0
			return s, nil
		}
		var se *StatusError
		var te *transportError
		switch {
		case errors.As(err, &se) && se.Status == http.StatusNotFound && strings.Contains(strings.ToLower(se.Body), "model"):
			// vLLM answers 404 for an unknown model name: the endpoint exists.
			return nil, fmt.Errorf("detect tokenizer at %s: model %q: %w", s.Target.Base(), model, err)
		case errors.As(err, &se) && se.Status == http.StatusNotFound:
			return nil, nil
		case errors.As(err, &te):
			return nil, fmt.Errorf("detect tokenizer at %s: %w", s.Target.Base(), err)
		case err != nil:
			errs = append(errs, err)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("detect tokenizer at %s: /tokenize answers in no known shape (vLLM, SGLang, llama.cpp, TGI): %w",
		s.Target.Base(), errors.Join(errs...))
}

// probeOpenAI tries the vLLM/SGLang request and tells the two apart by
// whether chat messages are accepted.
func probeOpenAI(ctx context.Context, s *Server) (bool, error) {
	var resp vllmResponse
	text, t := probeText, true
	if err := s.post(ctx, vllmRequest{Model: s.Model, Prompt: &text, AddSpecialTokens: &t}, &resp); err != nil {
		return false, err
	}
	// llama.cpp ignores the unknown "prompt" and answers {"tokens": []}.
	if resp.Count == nil && len(resp.Tokens) == 0 {
		return false, nil
	}
	s.Shape, s.MaxModelLen = ShapeSGLang, resp.MaxModelLen
	probe := *s
	probe.Shape = ShapeVLLM
	if _, ok, err := probe.CountChat(ctx, []Message{{Role: "user", Content: probeText}}); ok && err == nil {
		s.Shape = ShapeVLLM
	}
	return true, nil
}

func probeLlamaCpp(ctx context.Context, s *Server) (bool, error) {
	var resp struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := s.post(ctx, map[string]any{"content": probeText, "add_special": true}, &resp); err != nil {
		return false, err
	}
	if len(resp.Tokens) == 0 {
		return false, nil
	}
	s.Shape = ShapeLlamaCpp
	var props struct {
		NCtx     int `json:"n_ctx"`
		Defaults struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if getJSON(ctx, s, "/props", &props) == nil {
		s.MaxModelLen = max(props.NCtx, props.Defaults.NCtx)
	}
	return true, nil
}

func probeTGI(ctx context.Context, s *Server) (bool, error) {
	var resp []struct {
		ID *int `json:"id"`
	}
	if err := s.post(ctx, map[string]any{"inputs": probeText}, &resp); err != nil {
		return false, err
	}
	if len(resp) == 0 || resp[0].ID == nil {
		return false, nil
	}
	s.Shape = ShapeTGI
	var info struct {
		MaxInputTokens int `json:"max_input_tokens"`
	}
	if getJSON(ctx, s, "/info", &info) == nil {
		s.MaxModelLen = info.MaxInputTokens
	}
	return true, nil
}

// getJSON fetches an informational endpoint; callers ignore its errors.
func getJSON(ctx context.Context, s *Server, path string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, DetectTimeout)
	defer cancel()
	req, err := s.Target.NewRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	return s.do(req, out)
}
