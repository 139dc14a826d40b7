package h1

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// FuzzResponse: whatever a server sends, a round trip ends, in an error
// or in a body that reads to an end, without a panic; a connection is
// pooled only after a body read to its end.
func FuzzResponse(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n0\r\n\r\n",
		"HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort",
		"garbage",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, wire []byte) {
		tr := &Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
			client, server := net.Pipe()
			go func() {
				defer server.Close()
				http.ReadRequest(bufio.NewReader(server))
				server.Write(wire)
			}()
			return client, nil
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://fuzz.test/x", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			if tr.nidle != 0 {
				t.Fatal("a failed round trip pooled its connection")
			}
			return
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil && tr.nidle != 0 {
			t.Fatalf("a body that failed (%v) pooled its connection", err)
		}
		if ctx.Err() != nil {
			t.Fatal("the round trip did not end before its deadline")
		}
	})
}
