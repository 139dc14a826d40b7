package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counted is a test server that counts the connections it accepted.
type counted struct {
	*httptest.Server
	conns atomic.Int64
}

func newCounted(t *testing.T, h http.HandlerFunc, configure ...func(*http.Server)) *counted {
	t.Helper()
	s := &counted{Server: httptest.NewUnstartedServer(h)}
	for _, f := range configure {
		f(s.Config)
	}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// post sends a POST with body through tr and returns the response body
// read to its end.
func post(t *testing.T, tr http.RoundTripper, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return resp, string(b)
}

// echo answers with the request's method, URI and body, streamed in two
// flushed parts (a chunked body).
func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "%s %s ", r.Method, r.RequestURI)
	w.(http.Flusher).Flush()
	w.Write(b)
}

// TestKeepAlive: sequential requests share one connection, and each
// answer is whole.
func TestKeepAlive(t *testing.T) {
	srv := newCounted(t, echo)
	tr := &Transport{}
	for i := range 20 {
		_, got := post(t, tr, srv.URL+"/v1/x", fmt.Sprint("body ", i))
		if want := fmt.Sprintf("POST /v1/x body %d", i); got != want {
			t.Fatalf("answer %q, want %q", got, want)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("%d connections for 20 sequential requests, want 1", n)
	}
}

// TestConcurrentStreams: 64 streams at once each get their own answer,
// on at most 64 connections that a second round reuses.
func TestConcurrentStreams(t *testing.T) {
	srv := newCounted(t, echo)
	tr := &Transport{}
	for range 2 {
		var wg sync.WaitGroup
		for i := range 64 {
			wg.Go(func() {
				_, got := post(t, tr, srv.URL+"/s", fmt.Sprint(i))
				if want := fmt.Sprintf("POST /s %d", i); got != want {
					t.Errorf("answer %q, want %q", got, want)
				}
			})
		}
		wg.Wait()
	}
	if n := srv.conns.Load(); n > 64 {
		t.Errorf("%d connections for two rounds of 64 streams, want at most 64", n)
	}
}

// TestServerClosedIdle: a connection the server closed while it was idle
// is found closed before reuse, and the request goes on a new one.
func TestServerClosedIdle(t *testing.T) {
	srv := newCounted(t, echo, func(s *http.Server) { s.IdleTimeout = 20 * time.Millisecond })
	tr := &Transport{}
	post(t, tr, srv.URL, "a")
	time.Sleep(200 * time.Millisecond) // the server closes the idle connection
	if _, got := post(t, tr, srv.URL, "b"); got != "POST / b" {
		t.Fatalf("answer %q after the idle close", got)
	}
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the closed one dropped)", n)
	}
}

// TestConnectionClose: a response that says Connection: close is not
// pooled, nor is one to a request that asked for it.
func TestConnectionClose(t *testing.T) {
	srv := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, "ok")
	})
	tr := &Transport{}
	post(t, tr, srv.URL+"/close", "")
	post(t, tr, srv.URL+"/close", "")
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("%d connections for two Connection: close answers, want 2", n)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/keep", nil)
	req.Close = true
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	post(t, tr, srv.URL+"/keep", "")
	if n := srv.conns.Load(); n != 4 {
		t.Errorf("%d connections, want 4 (a request with Close set is not pooled)", n)
	}
}

// TestTLS: https with the caller's roots, ALPN held to http/1.1 although
// the server offers h2, and the connection reused.
func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %v", r.Proto, r.TLS != nil)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	var conns atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	tr := &Transport{TLS: &tls.Config{RootCAs: roots}}
	for range 3 {
		resp, got := post(t, tr, srv.URL, "")
		if got != "HTTP/1.1 true" || resp.Proto != "HTTP/1.1" {
			t.Fatalf("answer %q over %s, want HTTP/1.1 over TLS", got, resp.Proto)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d TLS connections for 3 requests, want 1", n)
	}
	// without the roots, the certificate is refused
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("error %v, want a certificate error", err)
	}
}

// flaky is a connection whose writes fail from the n-th on, writing
// nothing.
type flaky struct {
	net.Conn
	writes, failFrom int
}

func (f *flaky) Write(b []byte) (int, error) {
	f.writes++
	if f.failFrom > 0 && f.writes >= f.failFrom {
		return 0, errors.New("broken pipe")
	}
	return f.Conn.Write(b)
}

// TestRetryNothingWritten: a reused connection that takes none of a
// request's bytes gets the request again on a new connection; a new
// connection's failure is not retried.
func TestRetryNothingWritten(t *testing.T) {
	srv := newCounted(t, echo)
	var dials atomic.Int64
	tr := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		f := &flaky{Conn: nc}
		if dials.Add(1) == 1 {
			f.failFrom = 2 // the first connection breaks after one request
		}
		return f, nil
	}}
	post(t, tr, srv.URL, "a")
	if _, got := post(t, tr, srv.URL, "b"); got != "POST / b" {
		t.Fatalf("answer %q after the retry", got)
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("%d dials, want 2", n)
	}
	tr2 := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return &flaky{Conn: nc, failFrom: 1}, err
	}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("c"))
	if _, err := tr2.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("error %v, want the new connection's write failure", err)
	}
}

// TestGotConn: the trace hears of each connection as it is handed over,
// reused or not.
func TestGotConn(t *testing.T) {
	srv := newCounted(t, echo)
	tr := &Transport{}
	var reused []bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) },
	})
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
	}
	if fmt.Sprint(reused) != "[false true]" {
		t.Errorf("GotConn reused %v, want [false true]", reused)
	}
}

// TestIdleLimits: the pool keeps at most MaxIdle connections, drops one
// idle past IdleTimeout, and CloseIdleConnections empties it.
func TestIdleLimits(t *testing.T) {
	srv := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond) // four requests at once need four connections
		io.WriteString(w, "ok")
	})
	tr := &Transport{MaxIdle: 2, IdleTimeout: 50 * time.Millisecond}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { post(t, tr, srv.URL, "") })
	}
	wg.Wait()
	if tr.nidle != 2 {
		t.Errorf("%d idle connections, want MaxIdle 2", tr.nidle)
	}
	time.Sleep(100 * time.Millisecond)
	before := srv.conns.Load()
	post(t, tr, srv.URL, "")
	if n := srv.conns.Load() - before; n != 1 {
		t.Errorf("%d new connections after the idle timeout, want 1", n)
	}
	tr.CloseIdleConnections()
	if tr.nidle != 0 {
		t.Errorf("%d idle connections after CloseIdleConnections", tr.nidle)
	}
}

// TestNoGoroutinePerConnection: 100 open streams cost the transport no
// goroutine of its own; net/http's keeps two per connection, which the
// same test with it shows.
func TestNoGoroutinePerConnection(t *testing.T) {
	release := make(chan struct{})
	url := raw(t, func(c net.Conn, br *bufio.Reader) { // one goroutine per connection
		readRequest(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n")
		<-release
		io.WriteString(c, "0\r\n\r\n")
	})
	defer close(release)
	open := func(tr http.RoundTripper) int {
		before := runtime.NumGoroutine()
		for range 100 {
			req, _ := http.NewRequest(http.MethodPost, url, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
		}
		time.Sleep(10 * time.Millisecond)
		return runtime.NumGoroutine() - before - 100 // less the server's
	}
	if n := open(&Transport{}); n > 5 {
		t.Errorf("%d goroutines of the transport's for 100 open streams, want none", n)
	}
	if n := open(&http.Transport{}); n < 150 {
		t.Errorf("net/http's transport ran %d goroutines for 100 streams; the comparison is off", n)
	}
}

// TestNoReaderHeld: neither a streaming response nor an idle connection
// holds a head reader (4 KB each at thousands of streams); what the
// head's read took of the body is read first.
func TestNoReaderHeld(t *testing.T) {
	next := make(chan struct{})
	url := raw(t, func(c net.Conn, br *bufio.Reader) {
		for {
			if _, err := readRequest(br); err != nil {
				return
			}
			// the head and the first chunk in one write
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")
			<-next
			io.WriteString(c, "6\r\nsecond\r\n0\r\n\r\n")
		}
	})
	tr := &Transport{}
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, url, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b := resp.Body.(*body)
		buf := make([]byte, 64) // a stream decoder's reads are larger than a chunk
		if n, err := resp.Body.Read(buf); err != nil || string(buf[:n]) != "first" {
			t.Fatalf("first part %q, %v", buf[:n], err)
		}
		if b.c.br != nil {
			t.Error("a streaming response holds its head reader")
		}
		next <- struct{}{}
		rest, err := io.ReadAll(resp.Body)
		if err != nil || string(rest) != "second" {
			t.Fatalf("rest %q, %v", rest, err)
		}
		if tr.nidle != 1 || b.c.br != nil {
			t.Errorf("%d idle connections, reader held %v; want 1 and none", tr.nidle, b.c.br != nil)
		}
	}
}
