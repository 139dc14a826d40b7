package backend

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// drainLimit is how much of a body is read after its end marker so that
// the connection can be reused; a server that sends more is cut off.
const drainLimit = 64 << 10

// Do sends req, streams the answer and fills rec; epoch is the run's
// epoch. It never fails: a failure is rec.Error, and whatever arrived
// before it (chunks, counts, server timing) is kept. The instants and
// token counts it records are defined in the package documentation. The
// request timeout and the first-token timeout count from the start of Do
// (a dial included).
func (c *Client) Do(ctx context.Context, epoch time.Time, req *Request, rec *record.Record) {
	c.begin(rec, req)
	s := newStream(ctx, c, rec, epoch)
	s.reply = req.Reply
	defer s.release()
	defer s.countTokens()

	body, err := c.encode(req)
	if err != nil {
		now := time.Now()
		rec.SentNS, rec.EndNS = ns(now, epoch), ns(now, epoch)
		c.fail(rec, record.ClassClient, "building the request: "+err.Error())
		return
	}
	rctx, cancel := context.WithCancelCause(ctx)
	s.ctx = rctx
	whole := time.AfterFunc(c.timeout, func() { cancel(errTimeout) })
	if c.firstTimeout > 0 {
		s.first = time.AfterFunc(c.firstTimeout, func() { cancel(errFirstToken) })
		defer s.first.Stop()
	}

	rb := s.answer(body)
	if rb != nil && s.done {
		// The record is complete: return now, and let the rest of the body
		// (the chunked terminator) be read in the background so that the
		// connection can be reused without the caller waiting for it.
		whole.Reset(drainTimeout)
		go drain(rb, cancel)
		return
	}
	whole.Stop()
	if rb != nil {
		rb.Close()
	}
	cancel(nil)
}

// answer sends the request and reads its stream; it returns the response
// body (nil when there was no response). The response itself, its headers
// and request, is let go before the stream is read: at thousands of
// streams it is a kilobyte each.
func (s *stream) answer(body []byte) io.ReadCloser {
	resp := s.send(body)
	putBody(body) // written: the transport keeps no reference to it
	if resp == nil {
		return nil
	}
	rb := resp.Body
	if s.isStream(resp) {
		s.read(rb)
	}
	return rb
}

// drainTimeout bounds the background read after an end marker.
const drainTimeout = 5 * time.Second

func drain(body io.ReadCloser, cancel context.CancelCauseFunc) {
	io.CopyN(io.Discard, body, drainLimit)
	body.Close()
	cancel(nil)
}

// begin resets the fields Do owns.
func (c *Client) begin(rec *record.Record, req *Request) {
	rec.API, rec.Model = c.api.name, c.model
	rec.PromptTokensRequested, rec.OutputTokensRequested = req.PromptTokens, req.MaxTokens
	rec.PromptTokens, rec.PromptTokensSource = 0, record.SourceNone
	rec.OutputTokens, rec.OutputTokensSource, rec.ReasoningTokens = 0, record.SourceNone, 0
	rec.FinishReason, rec.Server, rec.Error = "", nil, nil
	rec.SentNS, rec.FirstTokenNS, rec.FirstOutputNS, rec.EndNS = 0, 0, 0, 0
	rec.Chunks = rec.Chunks[:0]
	if rec.Chunks == nil && req.MaxTokens > 0 {
		rec.Chunks = make([]record.Chunk, 0, min(req.MaxTokens+1, 1024))
	}
}

// encode is the request's JSON body, the API's map as json.Marshal would
// write it (appendJSON), in one allocation of about its size.
func (c *Client) encode(req *Request) ([]byte, error) {
	m, err := c.api.body(c, req)
	if err != nil {
		return nil, err
	}
	size := 256 + len(req.Prompt)
	for _, msg := range req.Messages {
		size += 32 + len(msg.Content)
	}
	b := *bodies.Get().(*[]byte)
	if cap(b) < size {
		b = make([]byte, 0, size)
	}
	return appendObject(b[:0], m)
}

// bodies hold request bodies from their encoding until the transport has
// written them.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody keeps a long prompt's buffer out of the pool.
const maxPooledBody = 1 << 20

func putBody(b []byte) {
	if cap(b) <= maxPooledBody {
		bodies.Put(&b)
	}
}

// send writes the request and returns the response, or nil after
// recording the failure.
func (s *stream) send(body []byte) *http.Response {
	// The request is written right after the transport hands over a
	// connection; a fresh connection's dial is not the server's latency.
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { s.sent = time.Now() }}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(s.ctx, trace), http.MethodPost, s.c.url, bytes.NewReader(body))
	if err != nil {
		now := time.Now()
		s.rec.SentNS, s.rec.EndNS = ns(now, s.epoch), ns(now, s.epoch)
		s.c.fail(s.rec, record.ClassClient, "building the request: "+err.Error())
		return nil
	}
	// Every request shares the client's headers: the transport never
	// changes a request's (it copies the request to add a proxy's).
	hreq.Header = s.c.header
	hreq.Host = s.c.host
	s.sent = time.Now()
	// The transport itself, not an http.Client: redirects are reported,
	// not followed, and the client's frames and header copy would double
	// the stack and heap a stream holds at thousands of streams.
	resp, err := s.c.tr.RoundTrip(hreq)
	s.rec.SentNS = ns(s.sent, s.epoch)
	if err != nil {
		// as http.Client words it: Post "URL": error
		s.sendFailed(&url.Error{Op: "Post", URL: hreq.URL.Redacted(), Err: err})
		return nil
	}
	return resp
}

// isStream checks the status and content type, recording the failure
// when the response is not a stream.
func (s *stream) isStream(resp *http.Response) bool {
	s.status = resp.StatusCode
	if resp.StatusCode >= 300 {
		s.httpError(resp)
		return false
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	ok := s.c.api.wire.accepts(mt)
	if !ok {
		s.notStream(resp, ct)
	}
	return ok
}
