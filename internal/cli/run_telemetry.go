package cli

import (
	"errors"
	"flag"
	"fmt"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/telemetry"
)

// telemetryFlags say what run samples beside its requests (docs/OUTPUT.md,
// telemetry.jsonl): the telemetry options, bound to the flags.
type telemetryFlags struct {
	off        bool
	opts       telemetry.Options
	notesShown map[string]bool
}

func (f *runFlags) defineTelemetry(fs *flag.FlagSet) {
	t := &f.tel
	t.notesShown = map[string]bool{} // shared by decide's copies of the flags
	fs.BoolVar(&t.off, "no-telemetry", false, "sample nothing beside the requests: no server metrics, GPU, host or client readings, no telemetry.jsonl")
	fs.DurationVar(&t.opts.Interval, "sample-interval", 0, "how often telemetry is sampled, in wall time (default 1s of the server's time: 100ms against the simulator, which runs 10× faster)")
	fs.Var((*urlList)(&t.opts.MetricsURLs), "metrics-url", "Prometheus endpoint of the server to scrape in place of the target's /metrics (repeatable: one per replica)")
	fs.StringVar(&t.opts.GPUMetricsURL, "gpu-metrics-url", "", "DCGM exporter of the server's GPUs, e.g. http://gpu-host:9400/metrics")
	fs.StringVar(&t.opts.HostMetricsURL, "host-metrics-url", "", "node exporter of the server's host, e.g. http://gpu-host:9100/metrics")
	fs.IntVar(&t.opts.ServerPID, "server-pid", 0, "process id of a local server, sampled with its children (default: found from a loopback --url's port)")
}

// options are the telemetry options the flags give (telemetry.Options.Check
// refuses those that cannot be used); nil when telemetry is off.
func (t *telemetryFlags) options() (*telemetry.Options, error) {
	if t.off {
		return nil, nil
	}
	o := t.opts
	return &o, optionError(o.Check())
}

// checkInterval checks --sample-interval, given with --no-telemetry too.
func (t *telemetryFlags) checkInterval() error {
	return optionError(telemetry.CheckInterval(t.opts.Interval))
}

// optionError tells a telemetry option's error in the terms of its flag.
func optionError(err error) error {
	oe, ok := errors.AsType[*telemetry.OptionError](err)
	if !ok {
		return err
	}
	name := "--" + oe.Flag()
	if oe.Value != "" {
		name += " " + oe.Value
	}
	return usagef(oe.Hint(), "%s: %v", name, oe.Err)
}

// urlList collects a repeatable URL flag, each checked as it comes.
type urlList []string

func (l *urlList) String() string { return "" }

func (l *urlList) Set(s string) error {
	if err := telemetry.CheckURL(s); err != nil {
		return err
	}
	*l = append(*l, s)
	return nil
}

// redact hides the user:password of a URL given on the command line.
func (l *urlList) redact(s string) string { return backend.RedactURL(s) }

// redactor knows the user:password of the telemetry URLs.
func (t *telemetryFlags) redactor() *backend.Redactor { return t.opts.Redactor() }

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
