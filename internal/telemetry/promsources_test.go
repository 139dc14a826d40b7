package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/backend"
)

// authServer serves a vLLM page at /metrics and records the Authorization
// header of each request by path.
func authServer(t *testing.T, metrics bool) (*httptest.Server, map[string]string) {
	t.Helper()
	seen := map[string]string{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen[r.URL.Path] = r.Header.Get("Authorization")
		if !metrics || r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("vllm:num_requests_running 1\n"))
	}))
	t.Cleanup(hs.Close)
	return hs, seen
}

func TestScrapeSourcesTargetMetrics(t *testing.T) {
	for _, c := range []struct {
		name    string
		serves  bool
		sources int
		note    string
	}{
		// The target answers /metrics: it is scraped.
		{"serves metrics", true, 1, ""},
		// It does not (Ollama): a note, and the run goes on.
		{"no metrics", false, 0, "server metrics unavailable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hs, _ := authServer(t, c.serves)
			tg, err := backend.NewTarget(backend.TargetOptions{URL: hs.URL})
			if err != nil {
				t.Fatal(err)
			}
			srcs, notes := scrapeSources(context.Background(), tg, nil, "", "")
			if len(srcs) != c.sources || (c.note == "") != (len(notes) == 0) ||
				(c.note != "" && (!strings.Contains(notes[0], c.note) || !strings.Contains(notes[0], "404"))) {
				t.Errorf("%d sources, notes %q; want %d sources and a note with %q", len(srcs), notes, c.sources, c.note)
			}
		})
	}
}

func TestScrapeSourcesCredentials(t *testing.T) {
	const key = "sk-target-key-5678"
	hs, seen := authServer(t, true)
	node, nodeSeen := authServer(t, true)
	tg, err := backend.NewTarget(backend.TargetOptions{URL: "http://127.0.0.1:1", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	replica := strings.Replace(hs.URL, "http://", "http://scraper:pa55word@", 1) + "/replica"
	// The same server under another host name: another host as far as
	// credentials go.
	elsewhere := strings.Replace(hs.URL, "127.0.0.1", "localhost", 1) + "/elsewhere"
	srcs, notes := scrapeSources(context.Background(), tg, []string{hs.URL + "/metrics", replica, elsewhere, "ftp://nowhere"},
		hs.URL+"/dcgm", node.URL)
	if len(srcs) != 5 || len(notes) != 2 || !strings.HasPrefix(notes[0], "--metrics-url ") ||
		!strings.Contains(notes[0], "credentials are not sent") {
		t.Fatalf("%d sources, notes %q; want 5, a note that credentials stay with the target's host, one naming --metrics-url", len(srcs), notes)
	}
	for _, s := range srcs {
		_, _ = s.Read(context.Background(), 0)
		if strings.Contains(s.Name(), "pa55word") || strings.Contains(s.Name(), "scraper") {
			t.Errorf("name %q shows the URL's credentials", s.Name())
		}
	}
	// A replica is reached with the target's API key, or with the
	// user:password its URL has. The exporters get no credential, and a
	// bare host:port means its /metrics.
	if seen["/metrics"] != "Bearer "+key {
		t.Errorf("replica got Authorization %q, want the target's key", seen["/metrics"])
	}
	if a, ok := seen["/elsewhere"]; !ok || a != "" {
		t.Errorf("a page on another host: reached %v, Authorization %q; want reached without the target's key", ok, a)
	}
	if seen["/replica"] != "Basic c2NyYXBlcjpwYTU1d29yZA==" {
		t.Errorf("replica with credentials in its URL got Authorization %q, want them", seen["/replica"])
	}
	if a, ok := seen["/dcgm"]; !ok || a != "" {
		t.Errorf("DCGM exporter: reached %v, Authorization %q; want reached without one", ok, a)
	}
	if a, ok := nodeSeen["/metrics"]; !ok || a != "" {
		t.Errorf("node exporter given as host:port: read at /metrics %v, Authorization %q", ok, a)
	}
}
