package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// tgiRequest is the part of a TGI POST /generate_stream body the simulator
// reads; others are accepted and ignored.
type tgiRequest struct {
	Inputs     *string `json:"inputs"`
	Parameters struct {
		MaxNewTokens *int   `json:"max_new_tokens"`
		Details      bool   `json:"details"`
		Seed         *int64 `json:"seed"`
	} `json:"parameters"`
}

// tgiDefaultMaxNewTokens is TGI's max_new_tokens default.
const tgiDefaultMaxNewTokens = 100

func parseTGI(body []byte) (genRequest, bool, *apiError) {
	var r tgiRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return genRequest{}, false, &apiError{status: http.StatusUnprocessableEntity, typ: "validation", msg: fmt.Sprintf("Failed to deserialize the JSON body into the target type: %v", err)}
	}
	p := r.Parameters
	g := genRequest{seed: p.Seed, stream: true, maxTokens: tgiDefaultMaxNewTokens}
	if p.MaxNewTokens != nil {
		if *p.MaxNewTokens < 1 {
			return g, false, &apiError{status: http.StatusUnprocessableEntity, typ: "validation", msg: "Input validation error: `max_new_tokens` must be strictly positive"}
		}
		g.maxTokens = *p.MaxNewTokens
	}
	if r.Inputs == nil || *r.Inputs == "" {
		return g, false, &apiError{status: http.StatusUnprocessableEntity, typ: "validation", msg: "Input validation error: `inputs` cannot be empty"}
	}
	g.prompt = bosTokens + countWords(*r.Inputs)
	return g, p.Details, nil
}

func writeTGIError(w http.ResponseWriter, e *apiError) {
	typ := e.typ
	if typ == "" || typ == "BadRequestError" {
		typ = "validation"
	}
	writeJSON(w, e.status, map[string]string{"error": e.msg, "error_type": typ})
}

// tgi serves TGI's POST /generate_stream: an SSE event per token (axum
// writes "data:" without a space) whose last carries generated_text and,
// when parameters.details was asked, details; no [DONE]. The simulator
// sends no end-of-sequence special token.
func (s *Server) tgi(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		writeTGIError(w, badRequest("reading the body: %v", err))
		return
	}
	g, details, aerr := parseTGI(body)
	s.answer(w, r, g, aerr, writeTGIError, func(j *job) { s.tgiStream(w, r, j, details) }, nil)
}

func (s *Server) tgiStream(w http.ResponseWriter, r *http.Request, j *job, details bool) {
	sseHeader(w)
	var text []byte
	s.stream(w, r, j, nil, func(buf []byte, avail int, done bool, err error) []byte {
		for j.emitted < avail {
			word := j.word()
			text = append(text, word...)
			buf = fmt.Appendf(buf, `data:{"index":%d,"token":{"id":%d,"text":"%s","logprob":-0.5,"special":false},"generated_text":`,
				j.emitted, 1000+j.emitted, word)
			if !done || err != nil || j.emitted < avail {
				buf = append(buf, `null,"details":null}`+"\n\n"...)
				continue
			}
			buf = fmt.Appendf(buf, `"%s","details":`, text)
			if details {
				reason := "eos_token"
				if j.s.reason == reasonLength {
					reason = "length"
				}
				buf = fmt.Appendf(buf, `{"finish_reason":"%s","generated_tokens":%d,"seed":null,"input_length":%d}}`+"\n\n",
					reason, j.emitted, j.g.prompt)
			} else {
				buf = append(buf, "null}\n\n"...)
			}
		}
		if err != nil {
			msg, _ := json.Marshal("Request failed during generation: " + err.Error())
			buf = append(append(append(buf, `data:{"error":`...), msg...), `,"error_type":"generation"}`+"\n\n"...)
		}
		return buf
	})
}
