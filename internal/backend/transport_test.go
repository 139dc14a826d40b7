package backend

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// TestOneTransportPerTarget: the preflight, the self-description and the
// load reach a server through one transport (NewTransport), over plain
// HTTP and TLS, with chunked answers, so that a passing preflight has been
// through what the load goes through. net/http's own transport is told
// apart by the Accept-Encoding: gzip it adds to every request.
func TestOneTransportPerTarget(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(fmt.Sprint("tls=", secure), func(t *testing.T) {
			var mu sync.Mutex
			var seen []string // method, path and Accept-Encoding of each request
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Accept-Encoding"))
				mu.Unlock()
				switch r.URL.Path {
				case "/v1/models", "/version":
					// two writes, flushed between: a chunked answer
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, `{"object":"list","data":[`)
					w.(http.Flusher).Flush()
					fmt.Fprint(w, `{"id":"m"}]}`)
				case "/v1/chat/completions":
					script{Steps: []step{{Data: chat(roleChunk)}, {Data: content("hi")}, {Data: done}}}.ServeHTTP(w, r)
				default:
					http.NotFound(w, r)
				}
			}))
			var conf *tls.Config
			if secure {
				srv.StartTLS()
				conf = &tls.Config{RootCAs: x509.NewCertPool()}
				conf.RootCAs.AddCert(srv.Certificate())
			} else {
				srv.Start()
			}
			defer srv.Close()
			tg := mustTarget(t, TargetOptions{URL: srv.URL, TLS: conf})
			defer tg.CloseIdleConnections()
			ctx := context.Background()
			p, err := tg.Preflight(ctx, record.APIOpenAIChat, "m")
			if err != nil || !slices.Equal(p.Models, []string{"m"}) {
				t.Fatalf("preflight %+v, %v", p, err)
			}
			Describe(ctx, tg, "m")
			c, err := New(Options{Target: tg, API: record.APIOpenAIChat, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			rec := &record.Record{}
			c.Do(ctx, time.Now(), &Request{Prompt: "hi", MaxTokens: 4}, rec)
			if rec.Error != nil {
				t.Fatalf("load request: %+v", rec.Error)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, want := range []string{"GET /v1/models ", "GET /version ", "POST /v1/chat/completions "} {
				if !slices.Contains(seen, want) {
					t.Errorf("requests %q: want %q, with no Accept-Encoding, among them", seen, want)
				}
			}
		})
	}
}
