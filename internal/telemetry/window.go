package telemetry

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Window is what a per-point (or per-slice) summary reads: every sample of
// the run in time order, and the span [From, To] on the run clock that it
// summarises. A summary may look just outside the span: a counter's delta
// starts from the last reading at or before From.
type Window struct {
	From, To int64
	// Scale converts the run clock's durations to model time (the
	// simulator's time_scale; 1 for real servers).
	Scale   float64
	Samples []Sample
}

// Summaries summarises a run's samples in one pass, in time order, over
// windows known before it (each point's measured span, each slice): what
// Summarize gives for each, and the run's EventLines. It keeps each
// window's running figures, never the samples, so its memory is the
// windows' and the sources', whatever the run's length.
type Summaries struct {
	scale   float64
	windows []*windowAcc
	byFrom  []*windowAcc // not yet begun, by From, latest first
	active  []*windowAcc
	// before holds what a window needs of the samples before its From:
	// each server instance's counters and histograms, each GPU's last
	// reading
	before struct {
		server *serverAcc
		gpus   *gpuAcc
	}
	events map[string]*eventKind
}

// windowAcc is one window's running figures.
type windowAcc struct {
	from, to int64
	server   *serverAcc
	gpus     *gpuAcc
	host     hostAcc
	client   clientAcc
	events   map[string]int
}

// eventKind is what EventLines says of one kind of event: how many, the
// first moments and the first event.
type eventKind struct {
	n     int
	times []int64
	first Sample
}

// NewSummaries summarises the windows [From, To] (on the run clock; scale
// converts its durations to model time).
func NewSummaries(scale float64, windows ...[2]int64) *Summaries {
	s := &Summaries{scale: scale, events: map[string]*eventKind{}}
	const never = int64(^uint64(0) >> 1)
	s.before.server, s.before.gpus = newServerAcc(never, never), newGPUAcc(never, never, scale)
	for _, w := range windows {
		a := &windowAcc{from: w[0], to: w[1], server: newServerAcc(w[0], w[1]), gpus: newGPUAcc(w[0], w[1], scale),
			host: hostAcc{from: w[0], to: w[1]}, client: clientAcc{from: w[0], to: w[1]}}
		s.windows = append(s.windows, a)
	}
	s.byFrom = slices.Clone(s.windows)
	slices.SortStableFunc(s.byFrom, func(a, b *windowAcc) int { return cmp.Compare(b.from, a.from) })
	return s
}

// Add takes the next sample. Samples come in time order (InTimeOrder);
// one that comes late counts where it comes.
func (s *Summaries) Add(smp *Sample) {
	for n := len(s.byFrom); n > 0 && s.byFrom[n-1].from <= smp.TNS; n = len(s.byFrom) {
		w := s.byFrom[n-1]
		s.byFrom = s.byFrom[:n-1]
		w.server.startFrom(s.before.server)
		w.gpus.startFrom(s.before.gpus)
		s.active = append(s.active, w)
	}
	s.active = slices.DeleteFunc(s.active, func(w *windowAcc) bool { return w.to < smp.TNS })
	for _, w := range s.active {
		w.add(smp)
	}
	s.before.server.add(smp)
	s.before.gpus.add(smp)
	if e := smp.Event; e != nil {
		k := s.events[e.Kind]
		if k == nil {
			k = &eventKind{first: *smp}
			s.events[e.Kind] = k
		}
		k.n++
		if len(k.times) < maxEventTimes {
			k.times = append(k.times, smp.TNS)
		}
	}
}

func (w *windowAcc) add(smp *Sample) {
	w.server.add(smp)
	w.gpus.add(smp)
	w.host.add(smp)
	w.client.add(smp)
	if smp.Event != nil && smp.TNS >= w.from && smp.TNS <= w.to {
		if w.events == nil {
			w.events = map[string]int{}
		}
		w.events[smp.Event.Kind]++
	}
}

// Point is window i's telemetry (Summarize).
func (s *Summaries) Point(i int, outputTokens float64) *Point {
	w := s.windows[i]
	p := &Point{
		Server: w.server.point(s.scale),
		GPUs:   w.gpus.points(),
		Host:   w.host.point(),
		Client: w.client.point(),
		Events: maps.Clone(w.events),
	}
	if e, ok := totalEnergy(p.GPUs); ok && outputTokens > 0 {
		v := e / outputTokens
		p.EnergyJPerOutputToken = &v
	}
	if p.Server == nil && p.GPUs == nil && p.Host == nil && p.Client == nil && p.Events == nil {
		return nil
	}
	return p
}

// EventLines says what happened during the run, a line per kind of event,
// with when (s of model time since the start: the run clock times scale)
// and the first detail. Nil when nothing happened.
func (s *Summaries) EventLines() []string {
	var lines []string
	for _, kind := range slices.Sorted(maps.Keys(s.events)) {
		lines = append(lines, s.eventLine(kind, s.events[kind]))
	}
	return lines
}

func (s *Summaries) eventLine(kind string, k *eventKind) string {
	times := make([]string, 0, len(k.times))
	for _, t := range k.times {
		times = append(times, at(t, s.scale))
	}
	more := ""
	if k.n > maxEventTimes {
		more = fmt.Sprintf(" and %d more", k.n-maxEventTimes)
	}
	first := k.first.Event
	what := cmp.Or(first.Source, k.first.Instance)
	if first.Detail != "" {
		what += ": " + first.Detail
	}
	return fmt.Sprintf("telemetry: %d %s event%s at %s%s (first: %s)", k.n, kind, plural(k.n, "", "s"), strings.Join(times, ", "), more, what)
}
