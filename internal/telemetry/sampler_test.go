package telemetry

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSource is a scripted source: read n (from 1) fails when fail(n)
// says so, blocks until ctx ends when slow(n), and blocks until release is
// closed when hang(n) (a source that ignores its deadline).
type fakeSource struct {
	name    string
	reads   atomic.Int32
	fail    func(n int) error
	slow    func(n int) bool
	hang    func(n int) bool
	release chan struct{}
}

func (f *fakeSource) Name() string { return f.name }

func (f *fakeSource) Read(ctx context.Context, now int64) ([]Sample, error) {
	n := int(f.reads.Add(1))
	switch {
	case f.hang != nil && f.hang(n):
		<-f.release
	case f.slow != nil && f.slow(n):
		<-ctx.Done()
		return nil, ctx.Err()
	case f.fail != nil:
		if err := f.fail(n); err != nil {
			return nil, err
		}
	}
	v := float64(n)
	return []Sample{{Source: KindServer, Instance: f.name, Server: &Server{Engine: "fake", Running: &v}}}, nil
}

// step ticks the sampler at t intervals (a synthetic run clock) and waits
// for the reads the tick started, so that a test knows every outcome.
func step(s *Sampler, t int) {
	s.tick(int64(t) * int64(s.o.Interval))
	s.reads.Wait()
}

// events lists the event kinds the sampler kept for a source, in order.
func events(s *Sampler, source string) []string {
	var out []string
	for _, smp := range s.Samples() {
		if smp.Event != nil && smp.Event.Source == source {
			out = append(out, smp.Event.Kind)
		}
	}
	return out
}

func TestSamplerEvents(t *testing.T) {
	const interval = 20 * time.Millisecond
	boom := errors.New("connection refused; key sk-secret")
	tests := []struct {
		name  string
		src   *fakeSource
		ticks int
		want  []string // event kinds, in order
		reads int      // readings (samples) kept
	}{
		// every read answers: no event
		{"healthy", &fakeSource{}, 5, nil, 5},
		// reads 2 to 4 fail: one scrape_failed for the streak, a gap once
		// the source is silent past two intervals, one note on recovery
		{"failing then recovering", &fakeSource{fail: func(n int) error {
			if n >= 2 && n <= 4 {
				return boom
			}
			return nil
		}}, 6, []string{EventScrapeFailed, EventGap, EventRecovered}, 3},
		// one failure, at once recovered: no gap
		{"one failure", &fakeSource{fail: func(n int) error {
			if n == 2 {
				return boom
			}
			return nil
		}}, 4, []string{EventScrapeFailed, EventRecovered}, 3},
		// slower than its deadline every time: one failure, one gap, never recovered
		{"always slow", &fakeSource{slow: func(int) bool { return true }}, 4, []string{EventScrapeFailed, EventGap}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.src.name = "fake"
			s := newSampler(SamplerOptions{Epoch: time.Now(), Interval: interval, Sources: []Source{tc.src},
				Redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[REDACTED]") }})
			for i := range tc.ticks {
				step(s, i)
			}
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			if got := events(s, "fake"); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("events = %v, want %v", got, tc.want)
			}
			readings := 0
			for _, smp := range s.Samples() {
				if smp.Server != nil {
					readings++
				}
				if smp.Event != nil && strings.Contains(smp.Event.Detail, "sk-secret") {
					t.Errorf("event detail not redacted: %q", smp.Event.Detail)
				}
			}
			if readings != tc.reads {
				t.Errorf("readings = %d, want %d", readings, tc.reads)
			}
		})
	}
}

// A source that ignores its deadline is read once, not once per tick, and
// delays neither the other source's readings nor Stop beyond stopWait.
func TestSamplerHungSourceSkipsTicks(t *testing.T) {
	const interval = 10 * time.Millisecond
	hung := &fakeSource{name: "hung", hang: func(n int) bool { return n == 1 }, release: make(chan struct{})}
	fast := &fakeSource{name: "fast"}
	s := newSampler(SamplerOptions{Epoch: time.Now(), Interval: interval, Sources: []Source{hung, fast}})
	for i := range 5 {
		s.tick(int64(i) * int64(interval))
		waitFor(t, func() bool { return int(fast.reads.Load()) == i+1 })
	}
	if n := hung.reads.Load(); n != 1 {
		t.Errorf("hung source read %d times while its first read was in flight, want 1", n)
	}
	if got := events(s, "hung"); len(got) != 1 || got[0] != EventGap {
		t.Errorf("hung source events = %v, want one gap", got)
	}
	close(hung.release) // the read returns: the next tick reads again, and the gap ends
	s.reads.Wait()
	step(s, 5)
	if got := events(s, "hung"); len(got) != 2 || got[1] != EventRecovered {
		t.Errorf("after release, events = %v, want gap then recovered", got)
	}
	if got := events(s, "fast"); got != nil {
		t.Errorf("fast source events = %v, want none", got)
	}
	s.Stop()
}

func TestSamplerStopDoesNotWaitForHungSource(t *testing.T) {
	defer func(d time.Duration) { stopWait = d }(stopWait)
	stopWait = 50 * time.Millisecond
	hung := &fakeSource{name: "hung", hang: func(int) bool { return true }, release: make(chan struct{})}
	defer close(hung.release)
	s := StartSampler(SamplerOptions{Epoch: time.Now(), Interval: time.Hour, Sources: []Source{hung}})
	waitFor(t, func() bool { return hung.reads.Load() == 1 })
	start := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 40*stopWait {
		t.Errorf("Stop took %v with a hung read, want about %v", d, stopWait)
	}
}

// Every sample is written as a line, in the order kept, and flushed by
// Stop; each carries the read's time on the run clock.
func TestSamplerWritesLines(t *testing.T) {
	var buf bytes.Buffer
	src := &fakeSource{name: "fake"}
	s := StartSampler(SamplerOptions{Epoch: time.Now(), Interval: 5 * time.Millisecond, Sources: []Source{src}, Out: &buf})
	// Three samples kept, not three reads begun: Stop during a read on a
	// busy machine leaves that read's sample out of both.
	waitFor(t, func() bool { return s.Taken() >= 3 })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	size := buf.Len()
	got, damaged, err := ReadSamples(&buf)
	if err != nil || damaged != 0 {
		t.Fatalf("ReadSamples: %v, %d damaged", err, damaged)
	}
	// written, a sample leaves memory
	n, kept := s.Written()
	if len(got) != s.Taken() || len(got) < 3 || n != int64(size) || len(kept) != 0 {
		t.Fatalf("file holds %d samples in %d bytes (Written: %d bytes), %d taken, %d kept; want every sample taken in the file, at least 3, none kept",
			len(got), size, n, s.Taken(), len(kept))
	}
	for i := range got {
		if got[i].TNS <= 0 || (i > 0 && got[i].TNS < got[i-1].TNS) {
			t.Errorf("sample %d t_ns = %d after %d: want positive, in time order", i, got[i].TNS, got[max(i-1, 0)].TNS)
		}
	}
}

// A failing file loses no sample: Stop reports the error, the samples
// stay in memory for the summary.
func TestSamplerWriteError(t *testing.T) {
	src := &fakeSource{name: "fake"}
	s := newSampler(SamplerOptions{Epoch: time.Now(), Interval: time.Millisecond, Sources: []Source{src}, Out: failingWriter{}})
	for i := range 3 {
		step(s, i)
	}
	err := s.Stop()
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Stop = %v, want the write error", err)
	}
	if n := len(s.Samples()); n != 3 {
		t.Errorf("%d samples kept, want 3", n)
	}
}

// A file that fails midway loses no sample and repeats none: Written
// gives the bytes flushed whole before the failure, and keeps every
// sample after them, a line cut short by the failure among them.
func TestSamplerWrittenAfterWriteError(t *testing.T) {
	for _, limit := range []int{0, 1, 150, 400, 1000} {
		out := &limitWriter{limit: limit}
		s := newSampler(SamplerOptions{Epoch: time.Now(), Out: out})
		for i := range 12 {
			s.put(Sample{TNS: int64(i + 1), Source: KindClient, Instance: InstanceClient, Client: &Client{Goroutines: i}})
			if i%3 == 2 {
				s.flush() // a tick
			}
		}
		n, kept := s.Written()
		var seen []int
		if _, err := ScanSamples(bytes.NewReader(out.buf.Bytes()[:n]), func(smp *Sample) { seen = append(seen, smp.Client.Goroutines) }); err != nil {
			t.Fatal(err)
		}
		for _, k := range kept {
			seen = append(seen, k.Client.Goroutines)
		}
		if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(seen, want) {
			t.Errorf("disk full after %d bytes: file (%d bytes) then memory give %v, want %v", limit, n, seen, want)
		}
	}
}

// limitWriter takes limit bytes, then fails.
type limitWriter struct {
	buf   bytes.Buffer
	limit int
}

func (w *limitWriter) Write(p []byte) (int, error) {
	room := w.limit - w.buf.Len()
	if room >= len(p) {
		return w.buf.Write(p)
	}
	w.buf.Write(p[:max(room, 0)])
	return max(room, 0), errors.New("disk full")
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSamplerRedactsRawLabels: an engine servebench does not map may label
// its series with the API key a request carried; telemetry.jsonl keeps
// the series, not the key.
func TestSamplerRedactsRawLabels(t *testing.T) {
	var out strings.Builder
	s := newSampler(SamplerOptions{Epoch: time.Now(), Out: &out,
		Redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[redacted]") }})
	s.put(Sample{Source: KindServer, Server: &Server{Engine: "unknown"}, Raw: map[string]float64{
		`requests_total{key="sk-secret"}`: 3, `requests_total{key="other"}`: 1, `up`: 1}})
	s.flush()
	if strings.Contains(out.String(), "sk-secret") {
		t.Errorf("telemetry.jsonl keeps the key: %s", out.String())
	}
	want := map[string]float64{`requests_total{key="[redacted]"}`: 3, `requests_total{key="other"}`: 1, `up`: 1}
	written, _, err := ReadSamples(strings.NewReader(out.String()))
	if err != nil || len(written) != 1 {
		t.Fatalf("telemetry.jsonl holds %d samples (%v), want 1", len(written), err)
	}
	if got := written[0].Raw; !maps.Equal(got, want) {
		t.Errorf("raw = %v, want %v", got, want)
	}
}
