package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/telemetry"
)

// Telemetry is what a run samples beside its requests.
type Telemetry struct {
	Sources  []telemetry.Source
	Interval time.Duration // 0: telemetry.DefaultInterval
	// Notes say what cannot be sampled and why, for the user to read
	// once before the run ("GPU telemetry unavailable: ...").
	Notes []string
	// Redact removes the target's and the telemetry URLs' credentials
	// from the sources' errors and raw series.
	Redact func(string) string
}

// newTelemetry builds the run's sources from the options (nil: no
// telemetry). Unless an interval is given, sampling is once a second of
// the target's time: ten times a second of wall time against the
// simulator at time scale 10, whose points last a tenth as long.
func newTelemetry(ctx context.Context, s Setup, scale float64) (*Telemetry, error) {
	if s.Telemetry == nil {
		return nil, nil
	}
	o := *s.Telemetry
	o.Target, o.Simulated = s.Target, s.Simulated
	if o.Interval == 0 {
		o.Interval = telemetry.DefaultInterval
		if scale > 1 {
			o.Interval = time.Duration(float64(o.Interval) / scale)
		}
	}
	srcs, notes, err := telemetry.Sources(ctx, o)
	if errors.Is(err, telemetry.ErrNoServerProcess) {
		return nil, &SetupError{Setting: "ServerPID", Err: err}
	}
	if err != nil {
		return nil, err // it names the flag
	}
	// A page may echo the credentials it was reached with: the target's,
	// or the user:password of its own URL.
	red := backend.JoinRedactors(s.Target.Redactor(), o.Redactor())
	return &Telemetry{Sources: srcs, Interval: o.Interval, Notes: notes, Redact: red.String}, nil
}

// close releases what the sources hold open (NVML), for telemetry that
// will not be sampled; nil is a no-op.
func (t *Telemetry) close() {
	if t == nil {
		return
	}
	for _, src := range t.Sources {
		telemetry.CloseSource(src)
	}
}

// sampling is a session's telemetry: the sampler and its file, by name
// too, for reading it back once closed.
type sampling struct {
	sampler *telemetry.Sampler
	f       *os.File
	name    string
}

// startSampling opens telemetry.jsonl in the run directory (when there is
// one) and starts sampling the sources and the client itself on the
// records' clock (the runner's epoch); w, when set, sees every sample.
func startSampling(t *Telemetry, dir string, runner *load.Runner, w Watcher) (*sampling, error) {
	if t == nil {
		return nil, nil
	}
	sm := &sampling{}
	srcs := append(slices.Clip(t.Sources), telemetry.NewClientSource(load.CPUSeconds, runner.TakeDispatchLag))
	o := telemetry.SamplerOptions{Epoch: runner.Epoch, Interval: t.Interval, Sources: srcs, Redact: t.Redact}
	if w != nil {
		o.Tap = w.Sample
	}
	if dir != "" {
		f, err := rundir.CreateTelemetry(dir)
		if err != nil {
			return nil, err
		}
		sm.f, sm.name, o.Out = f, f.Name(), f
	}
	sm.sampler = telemetry.StartSampler(o)
	return sm, nil
}

// stop ends sampling and flushes telemetry.jsonl to disk; an error means
// samples may be missing from the file (never from the summary).
func (sm *sampling) stop() error {
	if sm == nil || sm.sampler == nil {
		return nil
	}
	err := sm.sampler.Stop()
	if sm.f == nil {
		return err
	}
	name := sm.f.Name()
	if err != nil {
		err = fmt.Errorf("writing %s: %w", name, err)
	} else if err = sm.f.Sync(); err != nil {
		err = fmt.Errorf("flushing %s: %w", name, err)
	}
	if cerr := sm.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing %s: %w", name, cerr)
	}
	sm.f = nil
	return err
}

// scan gives everything sampled so far, in the order taken: the lines
// written to telemetry.jsonl, read back, then those the sampler kept
// (all of them without a file, those after a write error with one).
// Memory holds no sample that the file does.
func (sm *sampling) scan(fn func(*telemetry.Sample)) error {
	if sm == nil {
		return nil
	}
	n, kept := sm.sampler.Written()
	if n > 0 {
		f, err := os.Open(sm.name)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := telemetry.ScanSamples(io.LimitReader(f, n), fn); err != nil {
			return fmt.Errorf("reading %s back: %w", sm.name, err)
		}
	}
	for i := range kept {
		fn(&kept[i])
	}
	return nil
}

// observeSpan widens a point's measured window by r, and keeps the event r
// stands for; under the sink's lock, with r on the records' clock.
func (s *sink) observeSpan(r *record.Record) {
	if s.spans == nil {
		s.spans = map[int]*record.Span{}
	}
	sp := s.spans[r.Point]
	if sp == nil {
		sp = &record.Span{}
		s.spans[r.Point] = sp
	}
	sp.Add(r)
	if e, ok := telemetry.RecordEvent(r); ok {
		s.events = append(s.events, e)
	}
}

// span is point i's measured window so far.
func (s *sink) span(i int) record.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp := s.spans[i]; sp != nil {
		return *sp
	}
	return record.Span{}
}
