package telemetry

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

func ev(t int64, kind string) Sample {
	return Sample{TNS: t, Source: KindEvent, Instance: "src", Event: &Event{Kind: kind, Source: "src", Detail: "why"}}
}

func TestSummarizeEventsInWindow(t *testing.T) {
	samples := []Sample{ev(5, EventGap), ev(10, EventScrapeFailed), ev(15, EventScrapeFailed), ev(20, EventOOM), ev(21, EventOOM)}
	tests := []struct {
		name     string
		from, to int64
		want     map[string]int
	}{
		{"bounds inclusive", 10, 20, map[string]int{EventScrapeFailed: 2, EventOOM: 1}},
		{"everything", 0, 100, map[string]int{EventGap: 1, EventScrapeFailed: 2, EventOOM: 2}},
		// nothing happened in the window: no events, and no telemetry at all
		{"quiet window", 22, 30, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Summarize(Window{From: tc.from, To: tc.to, Scale: 1, Samples: samples}, 100)
			if tc.want == nil {
				if p != nil {
					t.Errorf("Summarize = %+v, want nil (absent, never zero)", p)
				}
				return
			}
			if p == nil || !reflect.DeepEqual(p.Events, tc.want) {
				t.Errorf("events = %v, want %v", p, tc.want)
			}
		})
	}
}

func TestTotalEnergy(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		gpus []GPUPoint
		want float64
		ok   bool
	}{
		{"no GPU", nil, 0, false},
		{"two GPUs summed", []GPUPoint{{Index: 0, EnergyJ: f(100)}, {Index: 1, EnergyJ: f(50)}}, 150, true},
		// one GPU without an energy counter: a partial sum would understate
		{"one unknown", []GPUPoint{{Index: 0, EnergyJ: f(100)}, {Index: 1}}, 0, false},
	}
	for _, tc := range tests {
		got, ok := totalEnergy(tc.gpus)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: totalEnergy = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRecordEvent(t *testing.T) {
	oom := &record.Record{EndNS: 42, Error: &record.Error{Class: record.ClassOOM, Message: "CUDA out of memory.\nTried to allocate"}}
	s, ok := RecordEvent(oom)
	if !ok || s.TNS != 42 || s.Event.Kind != EventOOM || s.Event.Detail != "CUDA out of memory. Tried to allocate" {
		t.Errorf("RecordEvent(oom) = %+v %+v, %v", s, s.Event, ok)
	}
	for _, r := range []*record.Record{{EndNS: 1}, {EndNS: 1, Error: &record.Error{Class: record.ClassTimeoutFirst}}} {
		if _, ok := RecordEvent(r); ok {
			t.Errorf("RecordEvent(%+v) made an event; only out-of-memory failures are events", r.Error)
		}
	}
}

func TestEventLines(t *testing.T) {
	var samples []Sample
	for i := range 7 {
		samples = append(samples, ev(int64(i+1)*1e9, EventScrapeFailed))
	}
	samples = append(samples, ev(2.5e9, EventGap))
	got := EventLines(samples, 10)
	want := []string{
		"telemetry: 1 gap event at 25.0 s (first: src: why)",
		"telemetry: 7 scrape_failed events at 10.0 s, 20.0 s, 30.0 s, 40.0 s, 50.0 s and 2 more (first: src: why)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("EventLines =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if EventLines([]Sample{{Source: KindServer}}, 1) != nil {
		t.Error("EventLines without events is not nil")
	}
}

// TestSummarizePrefillTPS: the server's prefill throughput over a window
// is the prompt-token sum's increase over the prefill-time sum's, in
// model time: 3000 tokens in 0.1 s of wall time at time scale 10 (1 s of
// model time) is 3000 tok/s; without the time series, none.
func TestSummarizePrefillTPS(t *testing.T) {
	srv := func(tns int64, secs, toks float64) Sample {
		return Sample{TNS: tns, Source: KindServer, Instance: "a", Server: &Server{Engine: "vllm", PrefillSeconds: &secs, PrefillTokens: &toks}}
	}
	samples := []Sample{srv(0, 1, 1000), srv(10, 1.05, 2500), srv(20, 1.1, 4000)}
	p := Summarize(Window{From: 0, To: 20, Scale: 10, Samples: samples}, 0)
	if p == nil || p.Server == nil || p.Server.PrefillTPS == nil || math.Abs(*p.Server.PrefillTPS-3000) > 1e-6 {
		t.Errorf("prefill tok/s = %v, want 3000", p.Server)
	}
	for i := range samples {
		samples[i].Server.PrefillSeconds = nil
	}
	if p := Summarize(Window{From: 0, To: 20, Scale: 10, Samples: samples}, 0); p != nil && p.Server != nil && p.Server.PrefillTPS != nil {
		t.Errorf("without prefill time: %v tok/s, want none", *p.Server.PrefillTPS)
	}
}
