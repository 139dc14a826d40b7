package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Responses as servers write them, byte by byte: every body framing, 1xx,
// malformed heads, and a request cancelled or a body closed mid-stream.

// raw serves each accepted connection with script, which reads the
// request from br and writes bytes to the connection.
func raw(t *testing.T, script func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				script(c, bufio.NewReader(c))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// readRequest reads one request off br, body included.
func readRequest(br *bufio.Reader) (*http.Request, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	io.ReadAll(req.Body)
	return req, nil
}

// TestBodies: every framing of a response body reads whole: a length, the
// chunked coding with a trailer, and a body ended by closing the
// connection; 1xx responses before the real one are skipped.
func TestBodies(t *testing.T) {
	cases := []struct {
		name, wire, want string
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello"},
		{"chunked with a trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\nX-T: 1\r\n\r\n", "hello"},
		{"until close", "HTTP/1.0 200 OK\r\n\r\nhello", "hello"},
		{"a header line longer than the head reader", "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("v", 3000) + "\r\nContent-Length: 5\r\n\r\nhello", "hello"},
		{"early hints first", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "hello"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := raw(t, func(c net.Conn, br *bufio.Reader) {
				if _, err := readRequest(br); err == nil {
					io.WriteString(c, tc.wire)
				}
			})
			resp, got := post(t, &Transport{}, url, "x")
			if got != tc.want || resp.StatusCode != 200 {
				t.Errorf("status %d body %q, want 200 %q", resp.StatusCode, got, tc.want)
			}
		})
	}
}

// TestEndlessInformational: a server that sends only 1xx responses is an
// error, not an endless read.
func TestEndlessInformational(t *testing.T) {
	url := raw(t, func(c net.Conn, br *bufio.Reader) {
		readRequest(br)
		for range 100 {
			io.WriteString(c, "HTTP/1.1 103 Early Hints\r\n\r\n")
		}
	})
	req, _ := http.NewRequest(http.MethodPost, url, nil)
	if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "informational") {
		t.Errorf("error %v, want one about informational responses", err)
	}
}

// TestMalformed: a response that is not HTTP is the parser's error.
func TestMalformed(t *testing.T) {
	url := raw(t, func(c net.Conn, br *bufio.Reader) {
		readRequest(br)
		io.WriteString(c, "SSH-2.0-OpenSSH\r\n\r\n")
	})
	req, _ := http.NewRequest(http.MethodPost, url, nil)
	if _, err := (&Transport{}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "malformed HTTP") {
		t.Errorf("error %v, want the parser's malformed response", err)
	}
}

// TestCancelMidBody: cancelling the request's context ends a read that
// waits for the next chunk, and the connection is not reused.
func TestCancelMidBody(t *testing.T) {
	release := make(chan struct{})
	srv := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	tr := &Transport{}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	if _, err := resp.Body.Read(buf); err == nil {
		t.Fatal("a read after the cancel succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the cancelled read took %v", d)
	}
	resp.Body.Close()
	if tr.nidle != 0 {
		t.Errorf("%d idle connections after a cancelled body, want 0", tr.nidle)
	}
}

// TestCancelBeforeHeaders: a context that ends while the server has not
// answered returns the context's error.
func TestCancelBeforeHeaders(t *testing.T) {
	url := raw(t, func(c net.Conn, br *bufio.Reader) {
		readRequest(br)
		time.Sleep(2 * time.Second)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if _, err := (&Transport{}).RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's", err)
	}
}

// TestCloseBeforeEnd: a body closed before its end closes the
// connection, at once, though the server is still sending; closing it
// from another goroutine ends a read in progress.
func TestCloseBeforeEnd(t *testing.T) {
	srv := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	tr := &Transport{}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	io.ReadFull(resp.Body, buf)
	done := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(buf)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	resp.Body.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the read in progress succeeded after Close")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not end the read in progress")
	}
	if tr.nidle != 0 {
		t.Errorf("%d idle connections, want 0", tr.nidle)
	}
}
