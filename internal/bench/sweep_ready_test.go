package bench

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/backend"
)

// TestListedRefusals: a server that answers readiness's model list and
// refuses (the credentials; a list without the model asked for, once it
// has settled) is a refusal, told before the deadline; a list that gains
// the model before it settles is ready.
func TestListedRefusals(t *testing.T) {
	settleFast(t)
	for _, c := range []struct {
		name    string
		status  int
		body    string
		model   string
		refusal bool
	}{
		{"credentials refused", http.StatusUnauthorized, `{"error":"bad key"}`, "", true},
		{"model not served", http.StatusOK, `{"object":"list","data":[{"id":"served"}]}`, "other", true},
		{"model listed late", http.StatusOK, "", "other", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked++
				body := c.body
				if body == "" { // the model comes after a few lists without it
					body = `{"object":"list","data":[{"id":"served"}]}`
					if asked > 2 {
						body = `{"object":"list","data":[{"id":"served"},{"id":"other"}]}`
					}
				}
				w.WriteHeader(c.status)
				w.Write([]byte(body))
			}))
			defer srv.Close()
			tg, err := backend.NewTarget(backend.TargetOptions{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.CloseIdleConnections()
			// long enough for the model to settle, short of a wait out
			ctx, cancel := context.WithTimeout(t.Context(), refusalSettle+5*time.Second)
			defer cancel()
			model, err := Sweep{Model: c.model}.listed(ctx, tg)
			if got := errors.As(err, new(refusal)); got != c.refusal {
				t.Errorf("refusal %v (%v), want %v", got, err, c.refusal)
			}
			if !c.refusal && (err != nil || model != c.model) {
				t.Errorf("listed %q, %v; want %q", model, err, c.model)
			}
			if c.refusal && ctx.Err() != nil {
				t.Errorf("told only when the deadline passed: %v", err)
			}
		})
	}
}

// TestFirstRequestRefused: a first request the server answers 400 for
// refusalSettle is a refusal with the server's words, told before the
// deadline; a 408 is asked again.
func TestFirstRequestRefused(t *testing.T) {
	settleFast(t)
	for _, c := range []struct {
		status  int
		refusal bool
	}{{http.StatusBadRequest, true}, {http.StatusRequestTimeout, false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.status)
			w.Write([]byte(`{"error":{"message":"this model has no chat template"}}`))
		}))
		tg, err := backend.NewTarget(backend.TargetOptions{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := backend.New(backend.Options{Target: tg, API: "openai-chat", Model: "m", MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), refusalSettle+2*time.Second)
		_, err = firstRequest(ctx, cl)
		if got := errors.As(err, new(refusal)); got != c.refusal || ctx.Err() != nil && c.refusal {
			t.Errorf("HTTP %d: refusal %v (%v, deadline passed %v), want %v", c.status, got, err, ctx.Err() != nil, c.refusal)
		}
		if c.refusal && (err == nil || !strings.Contains(err.Error(), "no chat template")) {
			t.Errorf("HTTP %d: %v, want the server's words", c.status, err)
		}
		cancel()
		cl.CloseIdleConnections()
		srv.Close()
	}
}

// settleFast makes refusals settle in a second for the test.
func settleFast(t *testing.T) {
	old := refusalSettle
	refusalSettle = time.Second
	t.Cleanup(func() { refusalSettle = old })
}
