// Package h1 is an HTTP/1.1 client transport for many long streamed
// responses at once. The goroutine that sends a request reads its response
// on the same connection: the transport runs no goroutine of its own, where
// net/http keeps a read loop and a write loop per connection (about 11 KB
// of stacks per stream, a quarter of servebench's memory per stream at
// 10,000 streams), and a request goes out in one write. It is an
// http.RoundTripper: the standard library's request and response types,
// its request writer and http.ReadResponse do the rest, but for chunked
// bodies, which chunked.go decodes in the caller's buffer.
package h1

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"
)

// Defaults of the Transport's optional fields.
const (
	// DefaultMaxIdle is above the largest concurrency servebench targets,
	// so that no stream's connection is closed after use and dialled again.
	DefaultMaxIdle = 8192
	// DefaultIdleTimeout is net/http's: servers close idle connections
	// sooner (uvicorn after 5 s), which the check before reuse finds.
	DefaultIdleTimeout = 90 * time.Second
	// DefaultReadBufferSize is the reader of response heads, which are a
	// few hundred bytes (a longer line is read in parts). A body is read
	// straight from the socket into its reader's buffer, after what the
	// head's read took ahead of it, and the head reader goes back to a
	// pool meanwhile.
	DefaultReadBufferSize = 1 << 10
	// DefaultKeepAlive is the TCP keep-alive period of a dialled connection.
	DefaultKeepAlive = 30 * time.Second
)

// max1xx bounds the informational responses (103 Early Hints and the
// like) read before the real one, as net/http does.
const max1xx = 16

// Transport keeps HTTP/1.1 connections to a few servers. Its zero value
// works: direct connections, the system's TLS defaults, the defaults above.
// It is safe for concurrent use. HTTP/2 is never negotiated: each stream
// has its own connection, as independent users would.
type Transport struct {
	// TLS configures https connections (nil: the system's defaults). Its
	// NextProtos is replaced by http/1.1, and ServerName is the URL's host
	// when empty.
	TLS *tls.Config
	// Proxy returns the proxy of a request, nil for none (nil: no proxy;
	// http.ProxyFromEnvironment reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY).
	// http, https, socks5 and socks5h proxies are supported.
	Proxy func(*http.Request) (*url.URL, error)
	// DialContext dials TCP (nil: a net.Dialer with DefaultKeepAlive).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxIdle bounds the idle connections kept; IdleTimeout drops one idle
	// longer; ReadBufferSize is the size of the pooled head readers.
	MaxIdle        int
	IdleTimeout    time.Duration
	ReadBufferSize int

	mu    sync.Mutex
	idle  map[route][]*conn // oldest first
	nidle int
	tls   map[string]*tls.Config // by server name
	// readers are the connections' head readers (see conn.br).
	readers sync.Pool
}

// route is where a connection goes: the server, and the proxy on the way.
type route struct {
	scheme, addr string
	proxy        string // the proxy's URL; "" for a direct connection
}

// errNothingWritten marks a request that failed before any of its bytes
// reached the connection: one sent on a reused connection is retried once
// on a new one, since the server cannot have seen it.
var errNothingWritten = errors.New("nothing written")

// RoundTrip sends req on a pooled or new connection and returns its
// response, whose body holds the connection until it is read to its end
// (the connection goes back to the pool) or closed (it is closed). The
// request is encoded once a connection is at hand, into a pooled buffer
// written in one call and given back right after: thousands of requests
// waiting for their connections hold only their bodies.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	r, proxy, err := t.route(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := req.Context()
	var wire *bytes.Buffer
	defer func() {
		if wire != nil {
			putWire(wire)
		}
	}()
	for retried := false; ; retried = true {
		c, err := t.get(ctx, r, proxy)
		if err != nil {
			if wire == nil {
				closeBody(req)
			}
			return nil, err
		}
		if wire == nil {
			if wire, err = encode(req, r, proxy); err != nil {
				t.put(c)
				return nil, err
			}
		}
		gotConn(ctx, c)
		stop := context.AfterFunc(ctx, c.close)
		if err := c.write(wire.Bytes()); err != nil {
			stop()
			c.close()
			if !retried && c.reused && errors.Is(err, errNothingWritten) && ctx.Err() == nil {
				continue
			}
			return nil, ctxErr(ctx, err)
		}
		putWire(wire)
		wire = nil
		return c.response(ctx, req, stop)
	}
}

// route checks req's URL and finds its proxy.
func (t *Transport) route(req *http.Request) (route, *url.URL, error) {
	u := req.URL
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return route{}, nil, fmt.Errorf("unsupported URL %q: want http:// or https:// and a host", u.Redacted())
	}
	r := route{scheme: u.Scheme, addr: net.JoinHostPort(u.Hostname(), cmp.Or(u.Port(), defaultPort(u.Scheme)))}
	if t.Proxy == nil {
		return r, nil, nil
	}
	proxy, err := t.Proxy(req)
	if err != nil || proxy == nil {
		return r, nil, err
	}
	switch proxy.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return r, nil, fmt.Errorf("proxy %s: unsupported scheme %q (want http, https, socks5 or socks5h)", proxy.Redacted(), proxy.Scheme)
	}
	r.proxy = proxy.String()
	return r, proxy, nil
}

// defaultPort is the port of a URL of scheme that names none.
func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// encode writes req as it goes on the wire: through an http proxy in
// absolute form with the proxy's credentials, else as usual. It closes
// req.Body.
func encode(req *http.Request, r route, proxy *url.URL) (*bytes.Buffer, error) {
	b := wires.Get().(*bytes.Buffer)
	b.Reset()
	b.Grow(encodedSize(req))
	var err error
	if proxy != nil && r.scheme == "http" && (proxy.Scheme == "http" || proxy.Scheme == "https") {
		if auth := proxyAuth(proxy); auth != "" && req.Header.Get("Proxy-Authorization") == "" {
			req = req.Clone(req.Context()) // a RoundTripper must not change the caller's request
			req.Header.Set("Proxy-Authorization", auth)
		}
		err = req.WriteProxy(b)
	} else {
		err = req.Write(b)
	}
	if err != nil {
		putWire(b)
		return nil, err
	}
	return b, nil
}

// wires hold requests between their encoding and their write: a
// microsecond each, so a few serve a run, where a buffer per request was
// a third of the garbage a run makes.
var wires = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledWire keeps a long prompt's buffer out of the pool.
const maxPooledWire = 1 << 20

func putWire(b *bytes.Buffer) {
	if b.Cap() <= maxPooledWire {
		wires.Put(b)
	}
}

// encodedSize is about the size of req on the wire, so that encoding it
// allocates once: the request line and the headers net/http adds (Host,
// User-Agent, Content-Length), the caller's headers, and the body, and
// the 512 bytes bytes.Buffer wants free before each read of the body.
func encodedSize(req *http.Request) int {
	n := 256 + 512 + len(req.URL.String()) + len(req.Host) + int(max(req.ContentLength, 0))
	for k, vs := range req.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

func gotConn(ctx context.Context, c *conn) {
	if trace := httptrace.ContextClientTrace(ctx); trace != nil && trace.GotConn != nil {
		info := httptrace.GotConnInfo{Conn: c.nc, Reused: c.reused, WasIdle: c.reused}
		if c.reused {
			info.IdleTime = time.Since(c.idleSince)
		}
		trace.GotConn(info)
	}
}

// get returns an idle connection of r's that is still open, or dials one.
func (t *Transport) get(ctx context.Context, r route, proxy *url.URL) (*conn, error) {
	for {
		c := t.takeIdle(r)
		if c == nil {
			break
		}
		if c.alive() {
			c.reused = true
			return c, nil
		}
		c.close()
	}
	return t.dialAside(ctx, r, proxy)
}

// dialAside dials on a goroutine of its own and waits for it. Dialling
// and a TLS handshake run deep call chains: on the sender's goroutine they
// would grow its stack to 16 KB, kept for the whole stream, where reading
// a stream needs under 8 (about 60 MB at 10,000 streams).
func (t *Transport) dialAside(ctx context.Context, r route, proxy *url.URL) (*conn, error) {
	type dialed struct {
		c   *conn
		err error
	}
	ch := make(chan dialed, 1)
	go func() {
		c, err := t.dial(ctx, r, proxy)
		ch <- dialed{c, err}
	}()
	d := <-ch // dial gives up when ctx ends
	return d.c, d.err
}

// takeIdle pops r's most recently used idle connection, closing those idle
// longer than the idle timeout on the way.
func (t *Transport) takeIdle(r route) *conn {
	timeout := cmp.Or(t.IdleTimeout, DefaultIdleTimeout)
	var stale []*conn
	defer func() { // after the unlock below
		for _, c := range stale {
			c.close()
		}
	}()
	t.mu.Lock()
	defer t.mu.Unlock()
	for cs := t.idle[r]; len(cs) > 0; cs = t.idle[r] {
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[r] = cs[:len(cs)-1]
		t.nidle--
		if time.Since(c.idleSince) <= timeout {
			return c
		}
		stale = append(stale, c)
	}
	return nil
}

// put keeps c for the next request of its route, or closes it when the
// pool is full.
func (t *Transport) put(c *conn) {
	c.idleSince = time.Now()
	t.mu.Lock()
	if t.nidle >= cmp.Or(t.MaxIdle, DefaultMaxIdle) {
		t.mu.Unlock()
		c.close()
		return
	}
	if t.idle == nil {
		t.idle = map[route][]*conn{}
	}
	t.idle[c.route] = append(t.idle[c.route], c)
	t.nidle++
	t.mu.Unlock()
}

// CloseIdleConnections closes the connections not in use (http.Client's
// method of the same name calls it).
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.nidle = nil, 0
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.close()
		}
	}
}

// tlsConfig is the configuration of connections to serverName, made once.
func (t *Transport) tlsConfig(serverName string) *tls.Config {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cfg, ok := t.tls[serverName]; ok {
		return cfg
	}
	cfg := &tls.Config{}
	if t.TLS != nil {
		cfg = t.TLS.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = serverName
	}
	cfg.NextProtos = []string{"http/1.1"}
	if t.tls == nil {
		t.tls = map[string]*tls.Config{}
	}
	t.tls[serverName] = cfg
	return cfg
}

// reader returns a head reader on nc from the pool.
func (t *Transport) reader(nc net.Conn) *bufio.Reader {
	if br, ok := t.readers.Get().(*bufio.Reader); ok {
		br.Reset(nc)
		return br
	}
	return bufio.NewReaderSize(nc, cmp.Or(t.ReadBufferSize, DefaultReadBufferSize))
}

func (t *Transport) putReader(br *bufio.Reader) {
	br.Reset(nil)
	t.readers.Put(br)
}
