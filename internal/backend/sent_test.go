package backend

import (
	"crypto/tls"
	"net"
	"net/http/httptest"
	"testing"
	"time"
)

// slowAccept delays every accepted connection, so that a client's TLS
// handshake, and so its dial, takes at least delay.
type slowAccept struct {
	net.Listener
	delay time.Duration
}

func (l slowAccept) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	time.Sleep(l.delay)
	return c, err
}

// TestSentExcludesDial: SentNS is taken when the transport hands over the
// connection, so a slow dial (here a TLS handshake held 300 ms) is not
// counted as the server's time to first token. The server answers at
// once, so TTFT stays far below the dial.
func TestSentExcludesDial(t *testing.T) {
	const dial = 300 * time.Millisecond
	srv := httptest.NewUnstartedServer(script{Steps: []step{{0, content("hi")}, {0, done}}})
	srv.Listener = slowAccept{srv.Listener, dial}
	srv.StartTLS()
	defer srv.Close()
	start := time.Now()
	rec := doURL(t, t.Context(), srv.URL, Options{TLS: &tls.Config{InsecureSkipVerify: true}}, nil)
	if rec.Error != nil {
		t.Fatal(rec.Error.Message)
	}
	if took := time.Since(start); took < dial {
		t.Fatalf("the request took %v: the dial was not held %v, so the test shows nothing", took, dial)
	}
	if ttft := time.Duration(rec.FirstTokenNS - rec.SentNS); ttft > dial/2 {
		t.Errorf("TTFT %v includes the %v dial", ttft, dial)
	}
}
