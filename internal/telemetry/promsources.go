package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
)

// probeTimeout bounds the one scrape that decides, before the run, whether
// the target serves /metrics at all.
const probeTimeout = 3 * time.Second

// scrapeSources builds the Prometheus-scrape sources: the engine's pages
// (each of metricsURLs, else the target's /metrics when it answers), a
// DCGM exporter (gpuURL) and a node exporter (hostURL). Notes say what
// will not be sampled and why.
func scrapeSources(ctx context.Context, target *backend.Target, metricsURLs []string, gpuURL, hostURL string) ([]Source, []string) {
	var srcs []Source
	var notes []string
	add := func(flag, raw string, creds bool, mk func(Endpoint) Source) bool {
		ep, err := endpointFor(raw, target, creds)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s %v; not sampled", flag, err))
			return false
		}
		srcs = append(srcs, mk(ep))
		return true
	}
	for _, u := range metricsURLs {
		creds := target != nil && sameHost(u, target.Base())
		added := add("--metrics-url", u, creds, func(ep Endpoint) Source { return NewServerSource(ep) })
		if added && !creds && target != nil && len(target.Header()) > 0 {
			notes = append(notes, fmt.Sprintf("--metrics-url %s is not on the target's host: "+
				"the target's credentials are not sent there (put user:password in that URL if it needs them)",
				backend.RedactURL(u)))
		}
	}
	if len(metricsURLs) == 0 && target != nil {
		if src, note := probeServer(ctx, target); src != nil {
			srcs = append(srcs, src)
		} else {
			notes = append(notes, note)
		}
	}
	// Exporters on the server's host are not the inference server: they
	// get its TLS settings, but none of its credentials.
	if gpuURL != "" {
		add("--gpu-metrics-url", gpuURL, false, func(ep Endpoint) Source { return NewDCGMSource(ep) })
	}
	if hostURL != "" {
		add("--host-metrics-url", hostURL, false, func(ep Endpoint) Source { return NewNodeSource(ep) })
	}
	return srcs, notes
}

// probeServer scrapes the target's /metrics once: a source when it
// answers with a Prometheus page, else a note saying why not.
func probeServer(ctx context.Context, target *backend.Target) (Source, string) {
	src := NewServerSource(EndpointOf(target, "/metrics"))
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	fams, err := src.s.scrape(ctx)
	if err == nil && len(fams) == 0 {
		err = fmt.Errorf("%s: an empty page", src.s.ep.URL)
	}
	if err != nil {
		return nil, fmt.Sprintf("server metrics unavailable: %v (give --metrics-url where the engine serves them)", err)
	}
	return src, ""
}

// sameHost reports whether two URLs name the same host (ports aside):
// the target's credentials may go to another port of its own host (TGI's
// and Triton's metrics ports), never to a host the user did not give them
// for.
func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Hostname() != "" && strings.EqualFold(ua.Hostname(), ub.Hostname())
}

// endpointFor is a page given by URL, reached with the target's TLS
// settings and, when creds, its headers (API key included), unless the
// URL has credentials of its own: those become a Basic Authorization
// header, never printed.
// A URL without a path means the host's /metrics.
func endpointFor(raw string, target *backend.Target, creds bool) (Endpoint, error) {
	o := backend.TargetOptions{URL: raw}
	if target != nil {
		o.TLS = target.TLS()
		// Credentials in the URL are meant for that page: they replace the
		// target's rather than lose to its API key.
		if u, err := url.Parse(raw); creds && err == nil && u.User == nil {
			o.Header = target.Header()
		}
	}
	t, err := backend.NewTarget(o)
	if err != nil {
		return Endpoint{}, err
	}
	// Every exporter serves its page at /metrics: a bare host:port means it.
	if u, err := url.Parse(t.Base()); err == nil && u.Path == "" {
		return EndpointOf(t, "/metrics"), nil
	}
	return EndpointOf(t, ""), nil
}
