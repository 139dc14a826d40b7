package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// llamaCppRequest is the part of a llama.cpp POST /completion body the
// simulator reads; others are accepted and ignored.
type llamaCppRequest struct {
	Model     string          `json:"model"`
	Prompt    json.RawMessage `json:"prompt"`
	NPredict  *int            `json:"n_predict"`
	MaxTokens *int            `json:"max_tokens"`
	IgnoreEOS bool            `json:"ignore_eos"`
	Seed      *int64          `json:"seed"`
	Stream    bool            `json:"stream"`
}

// parseLlamaCpp parses a /completion body. n_predict of -1 (the default)
// generates until the end of sequence or of the context.
func parseLlamaCpp(body []byte) (genRequest, *apiError) {
	var r llamaCppRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return genRequest{}, badRequest("invalid JSON body: %v", err)
	}
	g := genRequest{model: r.Model, ignoreEOS: r.IgnoreEOS, seed: r.Seed, stream: r.Stream, chat: true}
	n := r.NPredict
	if n == nil {
		n = r.MaxTokens
	}
	if n != nil && *n > 0 {
		g.maxTokens = *n
	}
	var err *apiError
	g.prompt, err = promptTokens(r.Prompt)
	g.ids = func() []int { return promptIDs(r.Prompt) }
	return g, err
}

// llamaCppError is llama.cpp's error body (format_error_response).
func llamaCppError(e *apiError) map[string]any {
	typ := "invalid_request_error"
	switch {
	case e.status == http.StatusNotFound:
		typ = "not_found_error"
	case e.status == http.StatusServiceUnavailable:
		typ = "unavailable_error"
	case e.status >= 500:
		typ = "server_error"
	}
	return map[string]any{"error": map[string]any{"code": e.status, "message": e.msg, "type": typ}}
}

func writeLlamaCppError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, llamaCppError(e))
}

// llamaCpp serves llama.cpp server's native POST /completion: an SSE
// event per token and a final event with stop: true, the counts and the
// timings, in the field order llama.cpp writes; no [DONE].
func (s *Server) llamaCpp(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		writeLlamaCppError(w, badRequest("reading the body: %v", err))
		return
	}
	g, aerr := parseLlamaCpp(body)
	if aerr == nil {
		aerr = s.checkModel(g.model, false)
	}
	s.answer(w, r, g, aerr, writeLlamaCppError,
		func(j *job) { s.llamaCppStream(w, r, j) },
		func(j *job, n int) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(s.llamaCppFinal(nil, j, j.fullText(n), n))
		})
}

func (s *Server) llamaCppStream(w http.ResponseWriter, r *http.Request, j *job) {
	sseHeader(w)
	s.stream(w, r, j, nil, func(buf []byte, avail int, done bool, err error) []byte {
		for j.emitted < avail {
			word := j.word()
			buf = fmt.Appendf(buf, `data: {"index":0,"content":"%s","tokens":[],"stop":false,"id_slot":-1,"tokens_predicted":%d,"tokens_evaluated":%d}`+"\n\n",
				word, j.emitted, j.g.prompt)
		}
		if err != nil {
			b, _ := json.Marshal(llamaCppError(serverError(err)))
			return append(append(append(buf, "data: "...), b...), "\n\n"...)
		}
		if done {
			buf = append(buf, "data: "...)
			buf = append(s.llamaCppFinal(buf, j, "", avail), "\n\n"...)
		}
		return buf
	})
}

// llamaCppFinal appends the final object: the text (empty when it was
// streamed), the counts, stop_type ("limit" at n_predict, "eos"
// otherwise) and the timings of the simulated clock: prompt_n prompt
// tokens evaluated in prompt_ms, predicted_n generated in predicted_ms.
func (s *Server) llamaCppFinal(b []byte, j *job, text string, n int) []byte {
	t := j.timing()
	stopType := "eos"
	if j.s.reason == reasonLength {
		stopType = "limit"
	}
	model, _ := json.Marshal(s.cfg.Model.Name)
	b = fmt.Appendf(b, `{"index":0,"content":"%s","tokens":[],"id_slot":0,"stop":true,"model":%s,"tokens_predicted":%d,"tokens_evaluated":%d,`,
		text, model, n, j.g.prompt)
	b = fmt.Appendf(b, `"prompt":"","has_new_line":false,"truncated":false,"stop_type":"%s","stopping_word":"","tokens_cached":%d,"timings":`,
		stopType, j.g.prompt+n)
	return append(appendLlamaTimings(b, t), '}')
}

// appendLlamaTimings writes llama.cpp's timings object (result_timings
// to_json): cache_n, the prompt tokens found in the prefix cache, then
// the prompt's and the prediction's counts, milliseconds, ms per token and
// tokens per second. As in llama.cpp, prompt_n counts only the prompt
// tokens evaluated, not the cached ones.
func appendLlamaTimings(b []byte, t reqTiming) []byte {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	perToken := func(d time.Duration, n int) (float64, float64) {
		if n <= 0 || d <= 0 {
			return 0, 0
		}
		return ms(d) / float64(n), 1e3 / (ms(d) / float64(n))
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	evaluated := t.Prompt - t.Cached
	ppt, pps := perToken(t.Prefill, evaluated)
	dpt, dps := perToken(t.Decode, t.Generated)
	return fmt.Appendf(b, `{"cache_n":%d,"prompt_n":%d,"prompt_ms":%s,"prompt_per_token_ms":%s,"prompt_per_second":%s,"predicted_n":%d,"predicted_ms":%s,"predicted_per_token_ms":%s,"predicted_per_second":%s}`,
		t.Cached, evaluated, f(ms(t.Prefill)), f(ppt), f(pps), t.Generated, f(ms(t.Decode)), f(dpt), f(dps))
}

// sseHeader starts an event stream.
func sseHeader(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}
