package cli

import (
	"flag"
	"fmt"
	"net/url"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/telemetry"
)

// telemetryFlags say what run samples beside its requests (docs/OUTPUT.md,
// telemetry.jsonl).
type telemetryFlags struct {
	off             bool
	interval        time.Duration
	metricsURLs     urlList
	gpuURL, hostURL string
	serverPID       int
	notesShown      map[string]bool
}

func (f *runFlags) defineTelemetry(fs *flag.FlagSet) {
	t := &f.tel
	t.notesShown = map[string]bool{} // shared by decide's copies of the flags
	fs.BoolVar(&t.off, "no-telemetry", false, "sample nothing beside the requests: no server metrics, GPU, host or client readings, no telemetry.jsonl")
	fs.DurationVar(&t.interval, "sample-interval", 0, "how often telemetry is sampled, in wall time (default 1s of the server's time: 100ms against the simulator, which runs 10× faster)")
	fs.Var(&t.metricsURLs, "metrics-url", "Prometheus endpoint of the server to scrape in place of the target's /metrics (repeatable: one per replica)")
	fs.StringVar(&t.gpuURL, "gpu-metrics-url", "", "DCGM exporter of the server's GPUs, e.g. http://gpu-host:9400/metrics")
	fs.StringVar(&t.hostURL, "host-metrics-url", "", "node exporter of the server's host, e.g. http://gpu-host:9100/metrics")
	fs.IntVar(&t.serverPID, "server-pid", 0, "process id of a local server, sampled with its children (default: found from a loopback --url's port)")
}

// options checks the telemetry flags; nil when telemetry is off.
func (t *telemetryFlags) options() (*telemetry.Options, error) {
	if t.off {
		return nil, nil
	}
	if err := t.checkInterval(); err != nil {
		return nil, err
	}
	if t.serverPID < 0 {
		return nil, usagef("servebench run --server-pid 1234", "--server-pid %d: want a process id", t.serverPID)
	}
	for name, u := range map[string]string{"gpu-metrics-url": t.gpuURL, "host-metrics-url": t.hostURL} {
		if u != "" {
			if err := checkHTTPURL(u); err != nil {
				return nil, usagef("servebench run --"+name+" http://host:9400/metrics", "--%s: %v", name, err)
			}
		}
	}
	return &telemetry.Options{Interval: t.interval, MetricsURLs: t.metricsURLs, GPUMetricsURL: t.gpuURL,
		HostMetricsURL: t.hostURL, ServerPID: t.serverPID}, nil
}

// checkInterval checks --sample-interval, given with --no-telemetry too.
func (t *telemetryFlags) checkInterval() error {
	if t.interval != 0 && (t.interval < 10*time.Millisecond || t.interval > time.Hour) {
		return usagef("servebench run --sample-interval 1s", "--sample-interval %v: want a duration from 10ms to 1h", t.interval)
	}
	return nil
}

// urlList collects a repeatable URL flag, each checked as it comes.
type urlList []string

func (l *urlList) String() string { return "" }

func (l *urlList) Set(s string) error {
	if err := checkHTTPURL(s); err != nil {
		return err
	}
	*l = append(*l, s)
	return nil
}

// redact hides the user:password of a URL given on the command line.
func (l *urlList) redact(s string) string { return backend.RedactURL(s) }

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", backend.RedactURL(s))
	}
	return nil
}

// redactor knows the user:password of the telemetry URLs.
func (t *telemetryFlags) redactor() *backend.Redactor {
	return backend.NewURLRedactor(append([]string{t.gpuURL, t.hostURL}, t.metricsURLs...)...)
}

// showNotes prints what cannot be sampled, each note once per command
// (decide measures several candidates with the same machine).
func (t *telemetryFlags) showNotes(env *Env, notes []string) {
	for _, n := range notes {
		if !t.notesShown[n] {
			t.notesShown[n] = true
			fmt.Fprintln(env.Stderr, env.redact(n))
		}
	}
}
