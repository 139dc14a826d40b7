package telemetry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/backend"
)

// pageServer serves whatever page holds, as a Prometheus text page.
type pageServer struct {
	mu   sync.Mutex
	page string
}

func (p *pageServer) set(s string) { p.mu.Lock(); p.page = s; p.mu.Unlock() }

func (p *pageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(p.page))
}

func servePage(t *testing.T, page string) (*pageServer, *httptest.Server) {
	t.Helper()
	ps := &pageServer{page: page}
	srv := httptest.NewServer(ps)
	t.Cleanup(srv.Close)
	return ps, srv
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "scrape", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func f(v float64) *float64 { return &v }

// fmtPtr prints a *float64 for messages.
func fmtPtr(p *float64) string {
	if p == nil {
		return "absent"
	}
	b, _ := json.Marshal(*p)
	return string(b)
}

func TestServerSourceEngines(t *testing.T) {
	type want struct {
		engine                              string
		running, waiting, kv, hit           *float64
		preempt, prompt, gen, queries, hits *float64
		ttftCount, queueCount, e2eCount     *float64
	}
	cases := []struct {
		file string
		want want
	}{
		// vLLM v1 with two data-parallel engines: counts and counters summed,
		// the KV fraction averaged, histograms summed bucket by bucket.
		{"vllm.txt", want{engine: "vllm", running: f(14), waiting: f(4), kv: f(0.375),
			preempt: f(3), prompt: f(100000), gen: f(20000), queries: f(1600), hits: f(600),
			ttftCount: f(150), queueCount: f(100), e2eCount: f(100)}},
		// Early v1 names: gpu_cache_usage_perc, gpu_prefix_cache_*.
		{"vllm-old.txt", want{engine: "vllm", running: f(4), waiting: f(0), kv: f(0.125),
			preempt: f(0), prompt: f(2048), gen: f(512), queries: f(300), hits: f(30)}},
		// SGLang, two dp ranks: the hit-rate gauge is a fraction, averaged;
		// prompt tokens are the prefix cache's queries, and no hit has
		// created cached_tokens_total yet.
		{"sglang.txt", want{engine: "sglang", running: f(12), waiting: f(2), kv: f(0.30), hit: f(0.4),
			preempt: f(5), prompt: f(8128902), gen: f(7557572), queries: f(8128902), ttftCount: f(10), queueCount: f(10)}},
		// TGI: token counts are histogram sums; no KV, no TTFT histogram.
		{"tgi.txt", want{engine: "tgi", running: f(16), waiting: f(3), prompt: f(21504), gen: f(5376),
			queueCount: f(42), e2eCount: f(42)}},
		{"llamacpp.txt", want{engine: "llamacpp", running: f(4), waiting: f(2), kv: f(0.75),
			prompt: f(33065), gen: f(7801)}},
		// Triton's TensorRT-LLM backend: running is "scheduled", not "active".
		{"trtllm.txt", want{engine: "trtllm", running: f(8), waiting: f(3), kv: f(0.4)}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			_, srv := servePage(t, readTestdata(t, c.file))
			got, err := NewServerSource(Endpoint{URL: srv.URL + "/metrics"}).Read(context.Background(), 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Server == nil || got[0].TNS != 7 || got[0].Source != KindServer {
				t.Fatalf("samples = %+v, want one server sample at 7", got)
			}
			s, w := got[0].Server, c.want
			if s.Engine != w.engine {
				t.Errorf("engine = %q, want %q", s.Engine, w.engine)
			}
			hc := func(h *Histogram) *float64 {
				if h == nil {
					return nil
				}
				return &h.Count
			}
			for _, x := range []struct {
				name      string
				got, want *float64
			}{
				{"running", s.Running, w.running}, {"waiting", s.Waiting, w.waiting},
				{"kv", s.KVCacheUsage, w.kv}, {"hit rate", s.PrefixCacheHitRate, w.hit},
				{"preemptions", s.Preemptions, w.preempt}, {"prompt", s.PromptTokens, w.prompt},
				{"generation", s.GenerationTokens, w.gen}, {"queries", s.PrefixCacheQueries, w.queries},
				{"hits", s.PrefixCacheHits, w.hits}, {"ttft count", hc(s.TTFT), w.ttftCount},
				{"queue count", hc(s.Queue), w.queueCount}, {"e2e count", hc(s.E2E), w.e2eCount},
			} {
				if (x.got == nil) != (x.want == nil) || (x.got != nil && !near(*x.got, *x.want)) {
					t.Errorf("%s = %s, want %s", x.name, fmtPtr(x.got), fmtPtr(x.want))
				}
			}
			if got[0].Raw != nil {
				t.Errorf("a mapped engine keeps raw series: %v", got[0].Raw)
			}
		})
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

func TestServerSourceHistogramBucketsSummed(t *testing.T) {
	_, srv := servePage(t, readTestdata(t, "vllm.txt"))
	got, err := NewServerSource(Endpoint{URL: srv.URL}).Read(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	h := got[0].Server.TTFT
	want := map[float64]float64{0.001: 0, 0.04: 10, 0.06: 40, 0.08: 70, 0.1: 90, 0.25: 150}
	for _, b := range h.Buckets {
		if w, ok := want[b.LE]; ok && b.Count != w {
			t.Errorf("bucket le=%g: %g, want %g", b.LE, b.Count, w)
		}
	}
	if len(h.Buckets) != 9 || h.Sum != 17.5 {
		t.Errorf("%d buckets, sum %g; want 9 finite buckets, sum 17.5", len(h.Buckets), h.Sum)
	}
}

func TestServerSourceUnknownEngineKeepsRaw(t *testing.T) {
	_, srv := servePage(t, readTestdata(t, "unknown.txt"))
	got, err := NewServerSource(Endpoint{URL: srv.URL}).Read(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Server.Engine != "unknown" {
		t.Fatalf("engine = %q", got[0].Server.Engine)
	}
	raw := got[0].Raw
	for k, v := range map[string]float64{
		`myengine_active_requests{worker="a"}`: 3, `myengine_active_requests{worker="b"}`: 4,
		"myengine_tokens_total": 1234, "myengine_latency_seconds_count": 2, "myengine_latency_seconds_sum": 1.5,
	} {
		if raw[k] != v {
			t.Errorf("raw[%s] = %v, want %v", k, raw[k], v)
		}
	}
	if _, ok := raw["myengine_temperature"]; ok {
		t.Error("a NaN gauge was kept: JSON cannot hold it")
	}
	if _, err := json.Marshal(got); err != nil {
		t.Fatal(err)
	}
}

func TestRawSeriesBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("# TYPE many gauge\n")
	for i := 0; i < 3*maxRawSeries; i++ {
		b.WriteString("many{i=\"" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "\",n=\"" + itoa(i) + "\"} 1\n")
	}
	fams, err := parseMetrics(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rawSeries(fams)); n != maxRawSeries {
		t.Errorf("%d raw series, want the bound %d", n, maxRawSeries)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestServerSourceReachesTheTargetsWay(t *testing.T) {
	const key = "sk-scrape-secret-1234"
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		if gotAuth != "Bearer "+key {
			http.Error(w, "bad key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("vllm:num_requests_running 2\n"))
	}))
	defer srv.Close()
	tg, err := backend.NewTarget(backend.TargetOptions{URL: srv.URL + "/v1", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewServerSource(EndpointOf(tg, "/metrics")).Read(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Instance != srv.URL+"/metrics" || *got[0].Server.Running != 2 {
		t.Errorf("instance %q running %s", got[0].Instance, fmtPtr(got[0].Server.Running))
	}
	// A page at the wrong path: the error is one line, with no credential.
	_, err = NewServerSource(EndpointOf(tg, "/nope")).Read(context.Background(), 0)
	if err == nil || strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "404") {
		t.Errorf("err = %v, want one line naming HTTP 404 and no key", err)
	}
}

func TestScrapeErrors(t *testing.T) {
	huge := strings.Repeat("# padding comment line to make the page large\n", maxScrapeBytes/40)
	cases := []struct {
		name, page, want string
	}{
		{"malformed", "vllm:num_requests_running{ 3\n", "parse"},
		{"partial", "# TYPE x histogram\nx_bucket{le=\"0.1\"} 1\nx_bucket{le=", "parse"},
		{"too large", huge + "vllm:num_requests_running 1\n", "larger than"},
		{"not a DCGM exporter", "up 1\n", "not a DCGM exporter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, srv := servePage(t, c.page)
			var err error
			if strings.Contains(c.name, "DCGM") {
				_, err = NewDCGMSource(Endpoint{URL: srv.URL}).Read(context.Background(), 0)
			} else {
				_, err = NewServerSource(Endpoint{URL: srv.URL}).Read(context.Background(), 0)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line containing %q", err, c.want)
			}
		})
	}
}

func TestScrapeHonoursDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := NewServerSource(Endpoint{URL: srv.URL}).Read(ctx, 0)
	if err == nil || time.Since(start) > 3*time.Second {
		t.Errorf("slow scrape: err %v after %v, want an error near the 100 ms deadline", err, time.Since(start))
	}
}

// TestScrapeGoesThroughTheLoadTransport: a metrics page is read through
// the load's transport (backend.NewTransport), over TLS with the target's
// configuration and chunked: net/http's own transport would ask for gzip.
func TestScrapeGoesThroughTheLoadTransport(t *testing.T) {
	var encoding []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encoding = append(encoding, r.Header.Get("Accept-Encoding"))
		fmt.Fprint(w, "vllm:num_requests_running 3\n")
		w.(http.Flusher).Flush() // what follows is chunked
		fmt.Fprint(w, "vllm:num_requests_waiting 1\n")
	}))
	defer srv.Close()
	conf := &tls.Config{RootCAs: x509.NewCertPool()}
	conf.RootCAs.AddCert(srv.Certificate())
	tg, err := backend.NewTarget(backend.TargetOptions{URL: srv.URL, TLS: conf})
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewServerSource(EndpointOf(tg, "/metrics")).Read(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if *got[0].Server.Running != 3 || *got[0].Server.Waiting != 1 || !slices.Equal(encoding, []string{""}) {
		t.Errorf("running %s waiting %s, Accept-Encoding %q (want none asked)", fmtPtr(got[0].Server.Running), fmtPtr(got[0].Server.Waiting), encoding)
	}
}
