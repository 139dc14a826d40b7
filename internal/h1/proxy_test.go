package h1

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHTTPProxy: through an http proxy a request goes in absolute form,
// with the proxy URL's credentials as Proxy-Authorization; the caller's
// request is not changed.
func TestHTTPProxy(t *testing.T) {
	var uri, auth string
	proxySrv := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		uri, auth = r.RequestURI, r.Header.Get("Proxy-Authorization")
		io.WriteString(w, "via proxy")
	})
	pu, _ := url.Parse(proxySrv.URL)
	pu.User = url.UserPassword("u", "p")
	tr := &Transport{Proxy: http.ProxyURL(pu)}
	req, _ := http.NewRequest(http.MethodPost, "http://llm.example:8000/v1/chat/completions", strings.NewReader("{}"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "via proxy" || uri != "http://llm.example:8000/v1/chat/completions" || auth != "Basic dTpw" {
		t.Errorf("answer %q, request URI %q, Proxy-Authorization %q", b, uri, auth)
	}
	if req.Header.Get("Proxy-Authorization") != "" {
		t.Error("the caller's request gained a Proxy-Authorization header")
	}
}

// TestConnectProxy: https through an http proxy opens a CONNECT tunnel
// with the proxy's credentials, then TLS to the server inside it; a proxy
// that refuses the tunnel is an error naming the proxy's status.
func TestConnectProxy(t *testing.T) {
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	defer backend.Close()
	var connects atomic.Int64
	proxyURL := raw(t, func(c net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if req.Method != http.MethodConnect || req.Header.Get("Proxy-Authorization") != "Basic dTpw" {
			io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
			return
		}
		connects.Add(1)
		up, err := net.Dial("tcp", req.Host)
		if err != nil {
			return
		}
		defer up.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go io.Copy(up, br)
		io.Copy(c, up)
	})
	roots := backend.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	pu, _ := url.Parse(proxyURL)
	pu.User = url.UserPassword("u", "p")
	tr := &Transport{TLS: &tls.Config{RootCAs: roots}, Proxy: http.ProxyURL(pu)}
	for range 2 {
		if _, got := post(t, tr, backend.URL, ""); got != "secret" {
			t.Fatalf("answer %q through the tunnel", got)
		}
	}
	if n := connects.Load(); n != 1 {
		t.Errorf("%d tunnels for 2 requests, want 1 (reused)", n)
	}
	pu.User = nil
	req, _ := http.NewRequest(http.MethodPost, backend.URL, nil)
	_, err := (&Transport{TLS: &tls.Config{RootCAs: roots}, Proxy: http.ProxyURL(pu)}).RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "407") {
		t.Errorf("error %v, want the proxy's 407", err)
	}
}

// TestUnsupportedProxy: a proxy scheme the transport cannot speak is an
// error before anything is dialled.
func TestUnsupportedProxy(t *testing.T) {
	pu, _ := url.Parse("ftp://proxy:21")
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1", nil)
	_, err := (&Transport{Proxy: http.ProxyURL(pu)}).RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "unsupported scheme") {
		t.Errorf("error %v, want an unsupported scheme", err)
	}
}

// TestHTTPSProxy: an https proxy is reached over TLS, and an http request
// goes through it in absolute form.
func TestHTTPSProxy(t *testing.T) {
	var uri string
	proxySrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri = r.RequestURI
		fmt.Fprintf(w, "tls %v", r.TLS != nil)
	}))
	defer proxySrv.Close()
	roots := proxySrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	pu, _ := url.Parse(proxySrv.URL)
	tr := &Transport{TLS: &tls.Config{RootCAs: roots}, Proxy: http.ProxyURL(pu)}
	if _, got := post(t, tr, "http://llm.example/v1/x", ""); got != "tls true" || uri != "http://llm.example/v1/x" {
		t.Errorf("answer %q, request URI %q", got, uri)
	}
}

// socks5 serves one SOCKS5 client without authentication: it reads the
// CONNECT request, dials the address and relays.
func socks5(c net.Conn, br *bufio.Reader) {
	hello := make([]byte, 2)
	if _, err := io.ReadFull(br, hello); err != nil {
		return
	}
	io.ReadFull(br, make([]byte, hello[1])) // the offered methods
	c.Write([]byte{5, 0})                   // no authentication
	head := make([]byte, 4)
	if _, err := io.ReadFull(br, head); err != nil || head[1] != 1 {
		return
	}
	var host string
	switch head[3] {
	case 1:
		ip := make([]byte, 4)
		io.ReadFull(br, ip)
		host = net.IP(ip).String()
	case 3:
		n, _ := br.ReadByte()
		name := make([]byte, n)
		io.ReadFull(br, name)
		host = string(name)
	default:
		return
	}
	port := make([]byte, 2)
	io.ReadFull(br, port)
	up, err := net.Dial("tcp", net.JoinHostPort(host, fmt.Sprint(int(port[0])<<8|int(port[1]))))
	if err != nil {
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	defer up.Close()
	c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	go io.Copy(up, br)
	io.Copy(c, up)
}

// TestSOCKSProxy: through a socks5 proxy the connection is tunnelled, and
// the request goes in origin form, as to the server itself.
func TestSOCKSProxy(t *testing.T) {
	srv := newCounted(t, echo)
	proxyURL := raw(t, socks5)
	pu, _ := url.Parse(strings.Replace(proxyURL, "http://", "socks5://", 1))
	tr := &Transport{Proxy: http.ProxyURL(pu)}
	for range 2 {
		if _, got := post(t, tr, srv.URL+"/v1/x", "b"); got != "POST /v1/x b" {
			t.Fatalf("answer %q through the SOCKS proxy", got)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("%d connections through the proxy for 2 requests, want 1", n)
	}
}
