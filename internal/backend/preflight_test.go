package backend

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/servebench/servebench/internal/record"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPreflight(t *testing.T) {
	list := func(ids ...string) string {
		var d []string
		for _, id := range ids {
			d = append(d, fmt.Sprintf(`{"id":%q}`, id))
		}
		return `{"object":"list","data":[` + strings.Join(d, ",") + `]}`
	}
	tests := []struct {
		name   string
		api    string
		model  string
		status int
		body   string
		// want: the model used and the note; or the error kind and a
		// phrase of its message.
		wantModel, wantNote string
		wantKind, wantMsg   string
	}{
		{name: "served", model: "m", body: list("a", "m"), wantModel: "m"},
		{name: "not served", model: "x", body: list("a", "b"), wantKind: PreflightModel, wantMsg: `does not serve model "x"; it serves: a, b`},
		{name: "empty list", model: "x", body: list(), wantKind: PreflightModel, wantMsg: "it serves: none"},
		// No --model: the only model is used; with several, OpenAI servers
		// pick their default, so nothing is chosen.
		{name: "picks the only one", body: list("only"), wantModel: "only"},
		{name: "several, none asked", body: list("a", "b")},
		{name: "ollama tag implied", api: record.APIOllamaChat, model: "llama3", body: `{"models":[{"name":"llama3:latest","model":"llama3:latest"}]}`, wantModel: "llama3"},
		{name: "ollama several, none asked", api: record.APIOllamaChat, body: `{"models":[{"name":"a"},{"name":"b"}]}`, wantKind: PreflightModel, wantMsg: "serves several: a, b"},
		// No model list: measured, with a note.
		{name: "404", model: "m", status: 404, body: "404 page not found", wantModel: "m", wantNote: "answered HTTP 404"},
		{name: "405", model: "m", status: 405, wantModel: "m", wantNote: "answered HTTP 405"},
		{name: "500", model: "m", status: 500, wantModel: "m", wantNote: "answered HTTP 500"},
		{name: "not a list", model: "m", body: `data: {"choices":[]}`, wantModel: "m", wantNote: "without a model list"},
		// Credentials: the server's words, without the key it echoes.
		{name: "401", model: "m", status: 401, body: `{"error":{"message":"bad key sk-preflight-key"}}`, wantKind: PreflightAuth, wantMsg: "refused the credentials (HTTP 401): bad key [redacted]"},
		{name: "403", model: "m", status: 403, wantKind: PreflightAuth, wantMsg: "(HTTP 403): Forbidden"},
		{name: "plain http to https", model: "m", status: 400, body: "Client sent an HTTP request to an HTTPS server.\n", wantKind: PreflightScheme, wantMsg: "use https://"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			want := "/v1/models"
			if tt.api == record.APIOllamaChat {
				want = "/api/tags"
			}
			if r.URL.Path != want || r.Header.Get("Authorization") != "Bearer sk-preflight-key" {
				http.Error(w, "unexpected "+r.URL.Path, http.StatusTeapot)
				return
			}
			w.WriteHeader(max(tt.status, 200))
			fmt.Fprint(w, tt.body)
		}))
		tg := mustTarget(t, TargetOptions{URL: srv.URL + "/v1", APIKey: "sk-preflight-key"})
		p, err := tg.Preflight(context.Background(), cmp.Or(tt.api, record.APIOpenAIChat), tt.model)
		srv.Close()
		var pe *PreflightError
		switch {
		case tt.wantKind != "":
			if !errors.As(err, &pe) || pe.Kind != tt.wantKind || !strings.Contains(pe.Msg, tt.wantMsg) {
				t.Errorf("%s: got %v, %v; want a %s error with %q", tt.name, p, err, tt.wantKind, tt.wantMsg)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case p.Model != tt.wantModel || !strings.Contains(p.Note, tt.wantNote) || (tt.wantNote == "") != (p.Note == ""):
			t.Errorf("%s: model %q note %q; want %q and %q", tt.name, p.Model, p.Note, tt.wantModel, tt.wantNote)
		case p.Picked != (tt.model == "" && tt.wantModel != ""):
			t.Errorf("%s: picked %v", tt.name, p.Picked)
		}
	}
}

// TestPreflightUnreachable: a server that cannot be reached is named with
// the reason in the user's terms.
func TestPreflightUnreachable(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake it refuses
	untrusted.StartTLS()
	defer untrusted.Close()
	tests := []struct{ url, kind, msg string }{
		{closed.URL, PreflightRefused, "no server answers at " + closed.URL},
		{"http://servebench-test.invalid", PreflightDNS, `cannot resolve host "servebench-test.invalid"`},
		{strings.Replace(plain.URL, "http:", "https:", 1), PreflightScheme, "speaks plain HTTP, not https"},
		{untrusted.URL, PreflightTLS, "is not trusted"},
	}
	for _, tt := range tests {
		_, err := mustTarget(t, TargetOptions{URL: tt.url}).Preflight(context.Background(), record.APIOpenAIChat, "m")
		var pe *PreflightError
		if !errors.As(err, &pe) || pe.Kind != tt.kind || !strings.Contains(pe.Msg, tt.msg) {
			t.Errorf("%s: %v; want a %s error with %q", tt.url, err, tt.kind, tt.msg)
		}
	}
}

// TestPreflightNothingServed: a URL with a path under which the model
// list and the API's endpoint both answer 404 stops the run, naming what
// was tried; a server that only lacks a model list is measured, and a
// server root is not probed.
func TestPreflightNothingServed(t *testing.T) {
	const probed = "/prefix/v1/chat/completions {}"
	tests := []struct {
		name     string
		prefix   string
		endpoint int // status of POST to the API's endpoint
		wantErr  string
		probe    string // what the server saw POSTed
	}{
		{"wrong path", "/prefix", http.StatusNotFound, "GET %[1]s/v1/models and POST %[1]s/v1/chat/completions answered HTTP 404", probed},
		// {} is no request an endpoint accepts: answered 400, it exists.
		{"no model list", "/prefix", http.StatusBadRequest, "", probed},
		{"no model list, credentials refused", "/prefix", http.StatusUnauthorized, "", probed},
		{"root", "", http.StatusNotFound, "", ""},
	}
	for _, tt := range tests {
		var probe string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				b, _ := io.ReadAll(r.Body)
				probe = r.URL.Path + " " + string(b)
				w.WriteHeader(tt.endpoint)
				return
			}
			http.NotFound(w, r)
		}))
		base := srv.URL + tt.prefix
		p, err := mustTarget(t, TargetOptions{URL: base}).Preflight(context.Background(), record.APIOpenAIChat, "m")
		srv.Close()
		if probe != tt.probe {
			t.Errorf("%s: probe %q, want %q", tt.name, probe, tt.probe)
		}
		var pe *PreflightError
		switch {
		case tt.wantErr != "":
			want := fmt.Sprintf(tt.wantErr, base)
			if !errors.As(err, &pe) || pe.Kind != PreflightNotFound || !strings.Contains(pe.Msg, want) {
				t.Errorf("%s: %v; want a %s error with %q", tt.name, err, PreflightNotFound, want)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case !strings.Contains(p.Note, "answered HTTP 404"):
			t.Errorf("%s: note %q", tt.name, p.Note)
		}
	}
}

// TestPreflightPlainToTLS: plain HTTP sent to a TLS port that answers as
// OpenSSL servers do (a reset or closed connection, or a TLS alert) is
// named a scheme error; a port that closes the connection and speaks no
// TLS is not.
func TestPreflightPlainToTLS(t *testing.T) {
	cert := httptest.NewUnstartedServer(http.NotFoundHandler())
	cert.StartTLS() // for its certificate
	cert.Close()
	tlsPort := listen(t, func(c net.Conn) {
		// crypto/tls, like OpenSSL, drops a client that is not one.
		tc := tls.Server(c, cert.TLS)
		tc.Handshake()
		tc.Close()
	})
	alert := listen(t, func(c net.Conn) {
		c.Read(make([]byte, 4096))
		c.Write([]byte("\x15\x03\x01\x00\x02\x02\x46"))
		c.Close()
	})
	closes := listen(t, func(c net.Conn) {
		c.Read(make([]byte, 4096))
		c.Close()
	})
	tests := []struct{ addr, kind, msg string }{
		{tlsPort, PreflightScheme, "and its port speaks TLS: use https:// in the URL"},
		{alert, PreflightScheme, "answered plain HTTP with a TLS alert, and its port speaks TLS"},
		{closes, PreflightNetwork, "cannot reach"},
	}
	for _, tt := range tests {
		_, err := mustTarget(t, TargetOptions{URL: "http://" + tt.addr}).Preflight(context.Background(), record.APIOpenAIChat, "m")
		var pe *PreflightError
		if !errors.As(err, &pe) || pe.Kind != tt.kind || !strings.Contains(pe.Msg, tt.msg) {
			t.Errorf("%s: %v; want a %s error with %q", tt.addr, err, tt.kind, tt.msg)
		}
	}
}

// listen serves each loopback connection with serve until the test ends,
// and returns the address.
func listen(t *testing.T, serve func(net.Conn)) string {
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
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

func FuzzModelList(f *testing.F) {
	f.Add([]byte(`{"object":"list","data":[{"id":"m"}]}`))
	f.Add([]byte(`{"models":[{"name":"llama3:latest","model":"llama3:latest"}]}`))
	f.Add([]byte(`{"data":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Whatever the bytes, no panic, and a list only from valid JSON.
		if names := modelList(b); names != nil && !json.Valid(b) {
			t.Errorf("modelList(%q) = %q from invalid JSON", b, names)
		}
	})
}
