package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// sglangRequest is the part of an SGLang POST /generate body the
// simulator reads; others are accepted and ignored.
type sglangRequest struct {
	Text           *string `json:"text"`
	InputIDs       []int   `json:"input_ids"`
	Stream         bool    `json:"stream"`
	SamplingParams struct {
		MaxNewTokens *int   `json:"max_new_tokens"`
		MinNewTokens int    `json:"min_new_tokens"`
		IgnoreEOS    bool   `json:"ignore_eos"`
		Seed         *int64 `json:"sampling_seed"`
	} `json:"sampling_params"`
}

// sglangDefaultMaxNewTokens is SGLang's max_new_tokens default
// (SamplingParams).
const sglangDefaultMaxNewTokens = 128

func parseSGLang(body []byte) (genRequest, *apiError) {
	var r sglangRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return genRequest{}, badRequest("invalid JSON body: %v", err)
	}
	p := r.SamplingParams
	g := genRequest{minTokens: p.MinNewTokens, ignoreEOS: p.IgnoreEOS, seed: p.Seed, stream: r.Stream,
		maxTokens: sglangDefaultMaxNewTokens}
	if p.MaxNewTokens != nil {
		if *p.MaxNewTokens < 1 {
			return g, badRequest("max_new_tokens must be at least 1, got %d", *p.MaxNewTokens)
		}
		g.maxTokens = *p.MaxNewTokens
	}
	switch {
	case r.Text != nil:
		g.prompt = bosTokens + countWords(*r.Text)
		g.ids = func() []int { return wordIDs([]int{specialIDBase}, *r.Text) }
	case len(r.InputIDs) > 0:
		g.prompt = len(r.InputIDs)
		g.ids = func() []int { return r.InputIDs }
	default:
		return g, badRequest("Either text or input_ids should be provided.")
	}
	return g, nil
}

func writeSGLangError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, map[string]any{"error": map[string]any{"message": e.msg}})
}

// sglang serves SGLang's native POST /generate: each SSE event holds the
// whole text so far and meta_info; the last one a finish_reason object
// and e2e_latency (seconds); then [DONE].
func (s *Server) sglang(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		writeSGLangError(w, badRequest("reading the body: %v", err))
		return
	}
	g, aerr := parseSGLang(body)
	s.answer(w, r, g, aerr, writeSGLangError,
		func(j *job) { s.sglangStream(w, r, j) },
		func(j *job, n int) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(s.sglangEvent(nil, j, j.fullText(n), n, true))
		})
}

func (s *Server) sglangStream(w http.ResponseWriter, r *http.Request, j *job) {
	sseHeader(w)
	var text []byte
	s.stream(w, r, j, nil, func(buf []byte, avail int, done bool, err error) []byte {
		for j.emitted < avail {
			text = append(text, j.word()...)
			last := done && err == nil && j.emitted == avail
			buf = append(s.sglangEvent(append(buf, "data: "...), j, string(text), j.emitted, last), "\n\n"...)
		}
		if err != nil {
			buf = append(buf, `data: {"error":{"message":`...)
			msg, _ := json.Marshal(err.Error())
			buf = append(append(buf, msg...), "}}\n\n"...)
		}
		if done {
			buf = append(buf, "data: [DONE]\n\n"...)
		}
		return buf
	})
}

// sglangEvent appends one event object after n tokens: the text so far
// (plain words, no escaping needed) and meta_info as tokenizer_manager
// builds it; the last carries finish_reason and e2e_latency.
func (s *Server) sglangEvent(b []byte, j *job, text string, n int, last bool) []byte {
	b = fmt.Appendf(b, `{"text":"%s","output_ids":[%d],"meta_info":{"id":"%032x","finish_reason":`, text, 1000+n, j.id)
	switch {
	case !last:
		b = append(b, "null"...)
	case j.s.reason == reasonLength:
		b = fmt.Appendf(b, `{"type":"length","length":%d}`, n)
	default:
		b = append(b, `{"type":"stop","matched":2}`...)
	}
	b = fmt.Appendf(b, `,"prompt_tokens":%d,"weight_version":"default","completion_tokens":%d,"cached_tokens":%d`, j.g.prompt, n, j.cached())
	if last {
		b = append(b, `,"e2e_latency":`...)
		b = strconv.AppendFloat(b, j.timing().E2E.Seconds(), 'g', -1, 64)
	}
	return append(b, "}}"...)
}

// sglangModelInfo serves GET /get_model_info.
func (s *Server) sglangModelInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"model_path": s.cfg.Model.Name, "tokenizer_path": s.cfg.Model.Name,
		"is_generation": true, "preferred_sampling_params": nil, "weight_version": "default"})
}
