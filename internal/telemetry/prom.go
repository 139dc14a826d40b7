package telemetry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/servebench/servebench/internal/backend"
)

// maxScrapeBytes bounds one /metrics body: a vLLM scrape is ~100 KB, a DCGM
// or node exporter's a few hundred KB; anything far larger is not a metrics
// page, and reading it whole would cost the client memory mid-run.
const maxScrapeBytes = 8 << 20

// scrapeTimeout bounds one scrape even when the sampler's context allows
// more: a scrape slower than this says more about the server than its
// metrics would, and the next interval's reading replaces it anyway.
const scrapeTimeout = 5 * time.Second

// Endpoint is one Prometheus page to scrape, with what reaching it takes.
type Endpoint struct {
	URL    string      // the page, without credentials: also the samples' Instance
	Header http.Header // sent with every GET (credentials included)
	Host   string      // the Host header, "" for the URL's
	TLS    *tls.Config // nil for the system's defaults
	// Redact removes credentials from error text; nil redacts nothing.
	Redact func(string) string
}

// EndpointOf is path on t's server (path "" when t's URL is the page
// itself), with t's headers, TLS and redaction: a --metrics-url is reached
// the way the target is, and its credentials are never printed.
func EndpointOf(t *backend.Target, path string) Endpoint {
	return Endpoint{URL: t.URL(path), Header: t.Header(), Host: t.Host(), TLS: t.TLS(), Redact: t.Redact}
}

// scraper GETs one endpoint and parses its text exposition.
type scraper struct {
	ep Endpoint
	hc *http.Client
}

func newScraper(ep Endpoint) *scraper {
	if ep.Redact == nil {
		ep.Redact = func(s string) string { return s }
	}
	// The load's transport: a metrics page behind the target's proxy or
	// TLS is reached as the target is. scrapeTimeout bounds the answer.
	return &scraper{ep: ep, hc: &http.Client{Transport: backend.NewTransport(ep.TLS, 1)}}
}

// scrape reads the page once. An error is one line, credentials redacted.
func (s *scraper) scrape(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	fams, err := s.get(ctx)
	if err != nil {
		return fams, errors.New(oneLine(s.ep.Redact(fmt.Sprintf("scrape %s: %v", s.ep.URL, err))))
	}
	return fams, nil
}

func (s *scraper) get(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.ep.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header = s.ep.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	// The classic text format: every engine serves it, and expfmt's text
	// parser reads it; OpenMetrics would need a second code path.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	req.Host = s.ep.Host
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return parseMetrics(io.LimitReader(resp.Body, maxScrapeBytes+1))
}

// errTooLarge is returned for a page over maxScrapeBytes.
var errTooLarge = fmt.Errorf("metrics page larger than %d MiB", maxScrapeBytes>>20)

// parseMetrics parses Prometheus text exposition with expfmt. Names are
// checked as UTF-8, the scheme current Prometheus servers accept, so an
// engine's "vllm:..." names and any newer UTF-8 names both parse. A body
// longer than maxScrapeBytes is refused, not parsed in part.
func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	cr := &countingReader{r: r}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(cr)
	if cr.n > maxScrapeBytes {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	return fams, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// oneLine keeps an error to one line of bounded length.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= 300 {
		return s
	}
	cut := 300
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut-- // a server's message may be in any script
	}
	return s[:cut] + "…"
}

// value is the number a gauge, counter or untyped metric carries; ok is
// false for other types and for values JSON cannot hold (NaN, ±Inf).
func value(m *dto.Metric) (float64, bool) {
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.Gauge.GetValue()
	case m.Counter != nil:
		v = m.Counter.GetValue()
	case m.Untyped != nil:
		v = m.Untyped.GetValue()
	default:
		return 0, false
	}
	return v, finite(v)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// labelsMatch says whether m carries every label in want.
func labelsMatch(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == k && lp.GetValue() == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// label is m's value for name, "" when absent.
func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// seriesKey is name{a="x",b="y"} with labels sorted: the Raw map's key.
func seriesKey(name string, m *dto.Metric) string {
	ls := m.GetLabel()
	if len(ls) == 0 {
		return name
	}
	parts := make([]string, 0, len(ls))
	for _, lp := range ls {
		parts = append(parts, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
	}
	sort.Strings(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}
