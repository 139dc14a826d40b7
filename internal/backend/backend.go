package backend

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/h1"
	"github.com/servebench/servebench/internal/record"
)

// DefaultTimeout bounds a whole request. It is long because a long
// generation is slow but not broken: 16k tokens at 30 tokens/s take about
// nine minutes, and a shorter default would turn them into timeouts.
const DefaultTimeout = 10 * time.Minute

// DefaultMaxConns is the idle-connection pool kept per server. It is above
// the largest concurrency servebench targets (5,000 streams), so that no
// stream's connection is closed after use and dialled again.
const DefaultMaxConns = 8192

// TokenCounter counts tokens in text with a local tokenizer.
type TokenCounter interface {
	Count(text string) int
}

// Options configures a Client. The zero value of each optional field
// means its default.
type Options struct {
	// Target is the server. When nil, one is made of BaseURL, APIKey,
	// Headers and TLS (see TargetOptions).
	Target *Target
	// BaseURL is the server root, e.g. http://127.0.0.1:8000; a trailing
	// /v1 is tolerated.
	BaseURL string
	// API is one of record.APIs().
	API   string
	Model string
	// APIKey is sent as a Bearer token. It never appears in records or
	// error messages.
	APIKey string
	// Headers are extra request headers; a "Host" entry sets the Host.
	Headers http.Header
	// Timeout bounds a whole request (DefaultTimeout when 0).
	Timeout time.Duration
	// FirstTokenTimeout bounds the wait for the first token (0: none but
	// Timeout).
	FirstTokenTimeout time.Duration
	// TLS is the caller's TLS configuration (custom CA, insecure).
	TLS *tls.Config
	// IgnoreEOS asks the server to generate exactly MaxTokens: OpenAI APIs
	// get "ignore_eos": true and "min_tokens" = max_tokens (vLLM and SGLang
	// honour both). Ollama has neither, so nothing is sent; a shortfall
	// shows in the records' output token counts.
	IgnoreEOS bool
	// ExtraBody is merged into every JSON body (sampling settings and so
	// on). The fields the request itself sets win over it.
	ExtraBody map[string]any
	// Counter is the local tokenizer used when the server reports no usage
	// (may be nil).
	Counter TokenCounter
	// MaxConns is the idle-connection pool size (DefaultMaxConns when 0).
	// It is not a cap: a cap would queue requests inside the client and
	// hide that wait from the latencies.
	MaxConns int
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one request to send.
type Request struct {
	// Prompt is the text for completion APIs; for chat APIs it is sent as
	// a single user message when Messages is empty.
	Prompt   string
	Messages []Message
	// MaxTokens caps the output (0: the server's default).
	MaxTokens int
	// PromptTokens is the prompt length asked of the workload, recorded
	// as is.
	PromptTokens int
	// Reply, when set, receives the answer text as it streams (reasoning
	// text excluded): a multi-turn session sends it back as history.
	Reply *strings.Builder
}

// Client sends requests to one server with one API. It is safe for
// concurrent use.
type Client struct {
	api          *api
	url          string
	host         string
	model        string
	header       http.Header
	red          *Redactor
	tr           *h1.Transport
	timeout      time.Duration
	firstTimeout time.Duration
	ignoreEOS    bool
	extra        map[string]any
	counter      TokenCounter
}

// New checks o and returns a Client.
func New(o Options) (*Client, error) {
	if err := CheckAPI(o.API, o.Model); err != nil {
		return nil, err
	}
	a := apis[o.API]
	t := o.Target
	if t == nil {
		var err error
		if t, err = NewTarget(TargetOptions{URL: o.BaseURL, APIKey: o.APIKey, Header: o.Headers, TLS: o.TLS}); err != nil {
			return nil, err
		}
	}
	if o.Timeout < 0 || o.FirstTokenTimeout < 0 || o.MaxConns < 0 {
		return nil, errors.New("timeouts and the connection pool size must not be negative")
	}
	c := &Client{
		api: a, url: t.URL(a.path), host: t.Host(), model: o.Model, red: t.Redactor(),
		timeout: cmp.Or(o.Timeout, DefaultTimeout), firstTimeout: o.FirstTokenTimeout,
		ignoreEOS: o.IgnoreEOS, extra: o.ExtraBody, counter: o.Counter,
		tr: NewTransport(t.TLS(), cmp.Or(o.MaxConns, DefaultMaxConns)),
	}
	c.header = t.Header()
	c.header.Set("Content-Type", "application/json")
	c.header.Set("Accept", a.accept)
	return c, nil
}

// CheckAPI checks that api is one of record.APIs() and that model is given when
// the API needs one ("" passes for the others).
func CheckAPI(api, model string) error {
	a, ok := apis[api]
	if !ok {
		return fmt.Errorf("unknown API %q: want one of %s", api, strings.Join(record.APIs(), ", "))
	}
	if a.needsModel && model == "" {
		return fmt.Errorf("the %s API needs a model name", api)
	}
	return nil
}

// CloseIdleConnections closes the pooled connections not in use.
func (c *Client) CloseIdleConnections() { c.tr.CloseIdleConnections() }

// NewTransport is the transport of every request to a server: the load,
// and the preflight, self-description, tokenizer and metrics requests
// beside it, so that a passing preflight has been through the proxy, TLS
// and chunked decoding that the load goes through. maxConns bounds the
// idle connections kept.
//
// It is tuned for thousands of concurrent streams to one host:
// internal/h1 reads each stream on its sender's goroutine, with no
// goroutines per connection, and writes each request in one system call.
// HTTP/1.1 only: one connection per stream, as a fleet of independent
// users would have. HTTP/2 would multiplex every stream onto a few
// connections, capped by the server's MAX_CONCURRENT_STREAMS (often 100
// to 250) and sharing one TCP window, so the client would queue and stall
// streams and the wait would show up as server latency. No cap on
// connections either: waiting for one would be client-side queueing hidden
// inside TTFT. No gzip: a compressor and a decompressor buffer chunks,
// delaying their arrival (h1 never asks for it).
func NewTransport(tlsConf *tls.Config, maxConns int) *h1.Transport {
	return &h1.Transport{
		TLS:         tlsConf,
		Proxy:       http.ProxyFromEnvironment,
		MaxIdle:     maxConns,
		IdleTimeout: 90 * time.Second,
	}
}

// ns converts an instant to nanoseconds since the run's epoch.
func ns(t, epoch time.Time) int64 { return int64(t.Sub(epoch)) }

// fail records a failure; later failures do not overwrite the first. The
// message loses the credentials before it is clipped, so no part of one
// can survive.
func (c *Client) fail(rec *record.Record, class, msg string) {
	if rec.Error != nil {
		return
	}
	rec.Error = &record.Error{Class: class, Message: clip([]byte(c.redact(msg)), maxMessage)}
}

// redact removes the target's credentials from text that may echo them.
func (c *Client) redact(s string) string { return c.red.String(s) }

func (c *Client) redactBytes(b []byte) []byte { return c.red.Bytes(b) }
