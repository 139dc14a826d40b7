package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
)

// write sends the encoded request. Nothing written marks errNothingWritten.
func (c *conn) write(wire []byte) error {
	n, err := c.nc.Write(wire)
	if err != nil && n == 0 {
		return fmt.Errorf("%w: %w", errNothingWritten, err)
	}
	return err
}

// response reads the response to req. stop ends the context's hold on
// the connection (it closes the connection when the context ends first).
func (c *conn) response(ctx context.Context, req *http.Request, stop func() bool) (*http.Response, error) {
	resp, err := readResponse(c.head(), req)
	if err != nil {
		stop()
		c.close()
		return nil, ctxErr(ctx, err)
	}
	keep := !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols
	src, framed := c.framing(resp)
	c.dropReader() // when the head's read took none of the body, its reader is not needed
	// The response outlives the round trip by the whole stream: it keeps
	// the request without the body, which was sent (a long prompt's).
	sent := *req
	sent.Body, sent.GetBody = nil, nil
	resp.Request = &sent
	resp.Body = &body{src: src, c: c, stop: stop, keep: keep && framed}
	return resp, nil
}

// ctxErr is the context's error when it ended, else err: a read that
// failed because the context closed the connection was cancelled.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// readResponse reads the response to req, past informational ones.
func readResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for range max1xx {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 != 1 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
	return nil, fmt.Errorf("more than %d informational (1xx) responses", max1xx)
}

// framing is the reader of resp's body straight from the connection, by
// the framing http.ReadResponse found: none, a length, the chunked coding,
// or the connection's end. ReadResponse's own body, which would read
// through the head's reader, is not used. framed is false for a body that
// ends with the connection.
func (c *conn) framing(resp *http.Response) (src io.Reader, framed bool) {
	switch {
	case resp.Body == http.NoBody:
		return http.NoBody, true
	case slices.Contains(resp.TransferEncoding, "chunked"):
		return newChunked(c), true
	case resp.ContentLength >= 0:
		return &lengthBody{r: c, left: resp.ContentLength}, true
	}
	return c, false
}

// lengthBody is a body of a known length: it returns io.EOF with its last
// bytes, and io.ErrUnexpectedEOF when the connection ends before them.
type lengthBody struct {
	r    io.Reader
	left int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	switch {
	case b.left == 0:
		err = io.EOF
	case err == io.EOF:
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// body is a response body on a connection: read to its end it returns the
// connection to the pool (unless either side asked to close it); closed
// before, or broken, it closes the connection.
type body struct {
	src  io.Reader
	c    *conn
	stop func() bool // the context's closer
	keep bool

	mu     sync.Mutex
	done   bool
	err    error // what Read returns once done
	closed atomic.Bool
}

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return 0, b.err
	}
	n, err := b.src.Read(p)
	if err != nil {
		b.finish(err)
	}
	return n, err
}

// Close gives up the rest of the body, and with it the connection. A
// Read in progress in another goroutine is ended by closing the
// connection under it.
func (b *body) Close() error {
	b.closed.Store(true)
	if !b.mu.TryLock() {
		b.c.close()
		return nil
	}
	defer b.mu.Unlock()
	if !b.done {
		b.finish(errClosedBody)
	}
	return nil
}

var errClosedBody = errors.New("h1: read on a closed response body")

// finish settles the connection once: back to the pool after a clean end
// that the context did not interrupt and that left nothing unread, else
// closed.
func (b *body) finish(err error) {
	b.done, b.err = true, err
	live := b.stop() // false: the context's closer has run, or is running
	clean := err == io.EOF && b.keep && !b.closed.Load()
	if ch, ok := b.src.(*chunked); ok && ch.extra {
		clean = false // the server sent more than this response
	}
	b.c.dropReader()
	if clean && live && b.c.br == nil {
		b.c.t.put(b.c)
		return
	}
	b.c.close()
}
