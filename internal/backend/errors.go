package backend

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
	"unicode/utf8"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sse"
)

// maxMessage bounds an error message taken from a server's body.
const maxMessage = 512

// maxErrorBody is how much of an error body is read: enough to find an
// out-of-memory mention past a stack trace's first lines.
const maxErrorBody = 4 << 10

var (
	errTimeout    = errors.New("request timeout")
	errFirstToken = errors.New("first-token timeout")
)

// ctxFailed classifies a failure caused by the request's context (a
// timeout, or the caller cancelling) and reports whether it was one.
func (s *stream) ctxFailed(now time.Time) bool {
	if s.ctx.Err() == nil {
		return false
	}
	cause := context.Cause(s.ctx)
	rec := s.rec
	switch {
	case errors.Is(cause, errTimeout), errors.Is(cause, errFirstToken):
		limit := s.c.timeout
		if errors.Is(cause, errFirstToken) {
			limit = s.c.firstTimeout
		}
		if rec.FirstTokenNS == 0 {
			s.c.fail(rec, record.ClassTimeoutFirst, fmt.Sprintf("no token within %v (%v)", limit, cause))
		} else {
			s.c.fail(rec, record.ClassTimeoutMid, fmt.Sprintf("stream unfinished after %v (%v)", limit, cause))
		}
	default:
		s.c.fail(rec, record.ClassCancelled, "cancelled by the caller")
	}
	s.end(now)
	return true
}

// sendFailed classifies a failure to get a response.
func (s *stream) sendFailed(err error) {
	now := time.Now()
	if s.ctxFailed(now) {
		return
	}
	s.c.fail(s.rec, record.ClassConnect, err.Error())
	s.end(now)
}

// cut classifies a stream that ended before its end marker. stray is
// what the decoder read before any event that is not of its format
// (sse.Decoder's Stray).
func (s *stream) cut(err error, stray []byte) {
	marker := s.wire.marker
	now := time.Now()
	if s.ctxFailed(now) {
		return
	}
	switch {
	case errors.Is(err, sse.ErrTooLarge):
		s.c.fail(s.rec, record.ClassMalformed, fmt.Sprintf("a chunk exceeds %d bytes", sse.DefaultMaxEventSize))
	case err != nil:
		s.c.fail(s.rec, record.ClassStreamCut, fmt.Sprintf("stream broke before %s: %v", marker, err))
	case s.events == 0 && len(stray) == 0:
		s.c.fail(s.rec, record.ClassEmptyStream, "the body ended before any event")
		s.rec.Error.Status = s.status
	case s.events == 0:
		why := fmt.Sprintf("the body is not an event stream although its content type is %q", s.c.api.accept)
		s.unstreamed(s.c.redactBytes(stray), why)
	default:
		s.c.fail(s.rec, record.ClassStreamCut, "stream ended without "+marker)
	}
	s.end(now)
}

// ended records the end marker, read at at. A stream that ends before any
// content-bearing chunk has no first token to time: it is a failure, not a
// completed request of 0 tokens and a near-zero latency.
func (s *stream) ended(at time.Time) {
	s.done = true
	s.end(at)
	if len(s.rec.Chunks) > 0 {
		return
	}
	msg := "the stream ended (" + s.wire.marker + ") before any token"
	if s.rec.FinishReason != "" {
		msg += fmt.Sprintf(" (finish reason %q)", s.rec.FinishReason)
	}
	s.c.fail(s.rec, record.ClassEmptyStream, msg)
}

// badChunk classifies a chunk that did not decode. The last event of a
// stream that ended mid-event is a cut stream, not a malformed chunk.
func (s *stream) badChunk(at time.Time, data []byte, err error, truncated bool) {
	data = s.c.redactBytes(data)
	if truncated {
		s.c.fail(s.rec, record.ClassStreamCut, "stream ended inside a chunk")
	} else {
		s.c.fail(s.rec, record.ClassMalformed, fmt.Sprintf("%v: %s", err, clip(data, 200)))
	}
	s.end(at)
}

// serverError records an error the server sent inside the stream.
func (s *stream) serverError(at time.Time, msg string) {
	class := record.ClassServerError
	if looksOOM(msg) {
		class = record.ClassOOM
	}
	s.c.fail(s.rec, class, msg)
	s.end(at)
}

// httpError classifies a response with status >= 400, or a redirect.
func (s *stream) httpError(resp *http.Response) {
	body := s.readBody(resp)
	now := time.Now()
	class := record.ClassHTTP4xx
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		class = record.ClassRateLimited
	case resp.StatusCode >= 500:
		class = record.ClassHTTP5xx
	case resp.StatusCode < 400:
		class = record.ClassNotStream
		body = fmt.Appendf(nil, "redirected to %s; use that as the base URL", resp.Header.Get("Location"))
	}
	if looksOOM(string(body)) {
		class = record.ClassOOM
	}
	msg := errorMessage(body)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	s.c.fail(s.rec, class, msg)
	if e := s.rec.Error; e != nil {
		e.Status, e.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	}
	s.end(now)
}

// notStream classifies a successful response that is not a stream: it
// cannot be timed.
func (s *stream) notStream(resp *http.Response, ct string) {
	body := s.readBody(resp)
	now := time.Now()
	s.unstreamed(body, fmt.Sprintf("content type %q, want %s", ct, s.c.api.accept))
	s.end(now)
}

// unstreamed classifies a successful response whose body (its start, API
// key removed) is not a stream; why says how that was seen. An empty body
// is an empty stream; a JSON error body is still a server error.
func (s *stream) unstreamed(body []byte, why string) {
	switch msg, isErr := jsonError(body); {
	case len(bytes.TrimSpace(body)) == 0:
		s.c.fail(s.rec, record.ClassEmptyStream, "the body was empty")
	case looksOOM(string(body)):
		s.c.fail(s.rec, record.ClassOOM, errorMessage(body))
	case isErr:
		s.c.fail(s.rec, record.ClassServerError, msg)
	default:
		s.c.fail(s.rec, record.ClassNotStream, fmt.Sprintf("%s (does the server stream?): %s", why, clip(body, 200)))
	}
	s.rec.Error.Status = s.status
}

// errorMessage is the message of a JSON error body, else the body itself.
func errorMessage(body []byte) string {
	if msg, ok := jsonError(body); ok {
		return msg
	}
	return string(body)
}

// jsonError extracts the message of {"error": "..."}, {"error": {"message":
// "..."}} or {"object": "error", "message": "..."} bodies.
func jsonError(body []byte) (string, bool) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Object  string          `json:"object"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", false
	}
	if v.Object == "error" {
		return v.Message, true
	}
	if len(v.Error) == 0 || string(v.Error) == "null" {
		return "", false
	}
	return errorText(v.Error), true
}

// errorText renders an "error" value: a string, or an object's message.
func errorText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	return string(raw)
}

// oomPhrases are what engines say when memory runs out (CUDA's "out of
// memory", llama.cpp's "failed to allocate" and KV-cache errors).
var oomPhrases = []string{"out of memory", "failed to allocate", "kv cache", "insufficient memory", "cannot allocate memory"}

// looksOOM reports whether an error text says memory ran out.
func looksOOM(s string) bool {
	lower := strings.ToLower(s)
	for _, p := range oomPhrases {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return containsWord(s, "OOM")
}

// containsWord finds w in s not flanked by letters ("OOM" but not "ROOM").
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isLetter(s[j-1])) && (end == len(s) || !isLetter(s[end])) {
			return true
		}
		i = j + 1
	}
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// clip trims b and cuts it to at most n bytes on a rune boundary.
func clip(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) <= n {
		return s
	}
	cut := n
	for i := 0; i < utf8.UTFMax && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	return s[:cut]
}

// readBody reads the start of a body that is not a stream, with the API
// key removed before anything is clipped (a clipped key would escape
// redaction).
func (s *stream) readBody(resp *http.Response) []byte {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return s.c.redactBytes(body)
}
