package h1

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/proxy"
)

// conn is one connection, used by one request at a time.
type conn struct {
	t     *Transport
	route route
	nc    net.Conn
	// br reads response heads: taken from the transport's pool for a
	// head, and given back once what it read ahead is consumed, so that
	// neither a streaming nor an idle connection holds one.
	br *bufio.Reader
	// raw is the TCP socket under nc (nil when the dialler's conn has
	// none), for the check before reuse; isTLS says nc is TLS over it.
	raw   syscall.RawConn
	isTLS bool

	reused    bool
	idleSince time.Time
	closeOnce sync.Once
}

func (c *conn) close() { c.closeOnce.Do(func() { c.nc.Close() }) }

// dial opens a connection on r: to the server, or through the proxy.
func (t *Transport) dial(ctx context.Context, r route, px *url.URL) (*conn, error) {
	nc, err := t.dialTCP(ctx, r, px)
	if err != nil {
		return nil, err
	}
	c := &conn{t: t, route: r, nc: nc}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	if px != nil && px.Scheme == "https" {
		if c.nc, err = t.handshake(ctx, c.nc, px.Hostname()); err != nil {
			return nil, fmt.Errorf("proxy %s: %w", px.Redacted(), err)
		}
	}
	if px != nil && r.scheme == "https" && (px.Scheme == "http" || px.Scheme == "https") {
		if err := t.connect(ctx, c, r, px); err != nil {
			c.close()
			return nil, err
		}
	}
	if r.scheme == "https" {
		host, _, _ := net.SplitHostPort(r.addr)
		if c.nc, err = t.handshake(ctx, c.nc, host); err != nil {
			return nil, err
		}
		c.isTLS = true
	}
	return c, nil
}

// head returns the connection's reader for a response head.
func (c *conn) head() *bufio.Reader {
	if c.br == nil {
		c.br = c.t.reader(c.nc)
	}
	return c.br
}

// Read reads what follows a response head: the bytes its reader read
// ahead, then the socket itself. The reader goes back to the pool once it
// is drained.
func (c *conn) Read(p []byte) (int, error) {
	if c.br != nil && c.br.Buffered() > 0 {
		n, err := c.br.Read(p)
		c.dropReader()
		return n, err
	}
	c.dropReader()
	return c.nc.Read(p)
}

// dropReader gives the head reader back, once it holds nothing.
func (c *conn) dropReader() {
	if c.br != nil && c.br.Buffered() == 0 {
		c.t.putReader(c.br)
		c.br = nil
	}
}

// dialTCP dials the server, an http(s) proxy, or the server through a
// SOCKS proxy.
func (t *Transport) dialTCP(ctx context.Context, r route, px *url.URL) (net.Conn, error) {
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: DefaultKeepAlive}).DialContext
	}
	if px == nil {
		return dial(ctx, "tcp", r.addr)
	}
	if px.Scheme == "socks5" || px.Scheme == "socks5h" {
		d, err := proxy.FromURL(px, contextDialer(dial))
		if err != nil {
			return nil, fmt.Errorf("proxy %s: %w", px.Redacted(), err)
		}
		nc, err := d.(proxy.ContextDialer).DialContext(ctx, "tcp", r.addr)
		if err != nil {
			return nil, fmt.Errorf("proxy %s: %w", px.Redacted(), err)
		}
		return nc, nil
	}
	nc, err := dial(ctx, "tcp", net.JoinHostPort(px.Hostname(), cmp.Or(px.Port(), defaultPort(px.Scheme))))
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", px.Redacted(), err)
	}
	return nc, nil
}

// contextDialer adapts a dial function to x/net/proxy's dialers.
type contextDialer func(ctx context.Context, network, addr string) (net.Conn, error)

func (d contextDialer) Dial(network, addr string) (net.Conn, error) {
	return d(context.Background(), network, addr)
}

func (d contextDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return d(ctx, network, addr)
}

// handshake starts TLS on nc with serverName; nc is closed on failure.
func (t *Transport) handshake(ctx context.Context, nc net.Conn, serverName string) (net.Conn, error) {
	tc := tls.Client(nc, t.tlsConfig(serverName))
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

// connect opens a tunnel to r's server through the http(s) proxy on c.
func (t *Transport) connect(ctx context.Context, c *conn, r route, px *url.URL) error {
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: r.addr}, Host: r.addr, Header: http.Header{}}
	if auth := proxyAuth(px); auth != "" {
		req.Header.Set("Proxy-Authorization", auth)
	}
	stop := context.AfterFunc(ctx, c.close)
	defer stop()
	if err := req.Write(c.nc); err != nil {
		return fmt.Errorf("proxy %s: CONNECT %s: %w", px.Redacted(), r.addr, err)
	}
	br := bufio.NewReaderSize(c.nc, 1<<10)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fmt.Errorf("proxy %s: CONNECT %s: %w", px.Redacted(), r.addr, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("proxy %s: CONNECT %s: %s", px.Redacted(), r.addr, resp.Status)
	}
	if br.Buffered() > 0 {
		return fmt.Errorf("proxy %s: CONNECT %s: the proxy sent data before the tunnel opened", px.Redacted(), r.addr)
	}
	return nil
}

// proxyAuth is the Basic Proxy-Authorization of a proxy URL's
// credentials, "" without any.
func proxyAuth(px *url.URL) string {
	if px.User == nil {
		return ""
	}
	pw, _ := px.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(px.User.Username()+":"+pw))
}

// socketState is what an idle connection's socket holds.
type socketState int

const (
	quiet   socketState = iota // open, nothing to read
	pending                    // bytes wait to be read
	broken                     // closed by the server, or failed
)

// tlsWait bounds the read that takes a TLS connection's pending records
// (session tickets) before its reuse.
const tlsWait = time.Millisecond

// alive reports whether an idle connection can carry another request: the
// server has not closed it and sent nothing on it since its last
// response. A TLS connection may hold records that carry no data (TLS
// 1.3 session tickets, sent after the handshake): they are read, and the
// connection is alive when nothing else follows them.
func (c *conn) alive() bool {
	if c.br != nil && c.br.Buffered() > 0 {
		return false
	}
	switch c.peek() {
	case quiet:
		return true
	case pending:
		return c.isTLS && c.onlyControlRecords()
	}
	return false
}

// onlyControlRecords reads what a TLS connection holds, for at most
// tlsWait: it is usable when the read times out with no data and no alert.
func (c *conn) onlyControlRecords() bool {
	c.nc.SetReadDeadline(time.Now().Add(tlsWait))
	_, err := c.head().Peek(1)
	c.nc.SetReadDeadline(time.Time{})
	var ne net.Error
	ok := errors.As(err, &ne) && ne.Timeout() && c.br.Buffered() == 0
	c.dropReader()
	return ok
}
