package telemetry

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/servebench/servebench/internal/backend"
)

// Options say what to sample during a run, as the command line gives it.
type Options struct {
	Interval time.Duration // 0: DefaultInterval
	// Target is the server measured: its /metrics is scraped when it
	// answers and no MetricsURLs are given, and a loopback target's port
	// leads to the server process.
	Target *backend.Target
	// Simulated: the target is the built-in simulator, inside this
	// process: it has no GPU and no process of its own.
	Simulated bool
	// MetricsURLs are Prometheus endpoints of the server (one per
	// replica), in place of the target's own /metrics.
	MetricsURLs []string
	// GPUMetricsURL is a DCGM exporter of the server's GPUs; HostMetricsURL
	// a node exporter of its host.
	GPUMetricsURL, HostMetricsURL string
	// ServerPID is the local server process (0: found from the target's
	// port when the target is on this machine).
	ServerPID int
}

// Sources builds every source the options ask for or that answers, but
// the client's own (NewClientSource), which needs the running load; with
// notes for the user about what cannot be sampled ("GPU telemetry
// unavailable: no NVIDIA driver"). The error is a setting that cannot be
// used (a --server-pid naming no process); a source that is merely absent
// is a note.
func Sources(ctx context.Context, o Options) ([]Source, []string, error) {
	all, notes := scrapeSources(ctx, o.Target, o.MetricsURLs, o.GPUMetricsURL, o.HostMetricsURL)
	gpus, gpuNotes := gpuSources(o)
	all = append(all, gpus...)
	notes = append(notes, gpuNotes...)
	host, note, err := hostSourceFor(o)
	if err != nil {
		return nil, nil, err
	}
	if host != nil {
		all = append(all, host)
	}
	if note != "" {
		notes = append(notes, note)
	}
	return all, notes, nil
}

// gpuSources reads the local GPUs through NVML, unless the server is the
// simulator (no GPU of its own) or a DCGM exporter was named for its
// GPUs; a machine without GPUs or driver gets a note.
func gpuSources(o Options) ([]Source, []string) {
	if o.Simulated || o.GPUMetricsURL != "" {
		return nil, nil
	}
	src, err := NewNVML()
	if err != nil {
		return nil, []string{"GPU telemetry unavailable: " + err.Error()}
	}
	return []Source{src}, nil
}

// hostSourceFor reads this machine and the server process when it is
// local: --server-pid, or the process listening on a loopback target's
// port. A node exporter named for the host replaces the machine's own
// figures only when the server is elsewhere, so both may be read.
func hostSourceFor(o Options) (Source, string, error) {
	port := 0
	if o.Target != nil {
		u, _ := url.Parse(o.Target.Base())
		port = LoopbackPort(u)
	}
	if o.HostMetricsURL != "" && port == 0 && o.ServerPID == 0 {
		return nil, "", nil // the server's host is read through its node exporter
	}
	src, note, err := NewHostSource(HostOptions{PID: o.ServerPID, Port: port, InProcess: o.Simulated})
	switch {
	case errors.Is(err, ErrHostUnavailable):
		return nil, err.Error(), nil
	case err != nil:
		return nil, "", err
	}
	if note == inProcessNote {
		note = "" // the simulator's own default run says nothing it need not
	}
	return src, note, nil
}
