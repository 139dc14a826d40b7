package metrics

import (
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

// TestClientWarnings: a point whose client was busy or late says so, each
// with its own warning; a quiet client adds none.
func TestClientWarnings(t *testing.T) {
	const busy, late = "CPU (of one core)", "behind schedule"
	tests := []struct {
		name   string
		client record.ClientStats
		want   []string
	}{
		// Over a 2 s window, with 200 requests sent.
		{"quiet client", measured(20, 1, 200), nil},
		// Far above any machine's core count times the threshold.
		{"busy client", measured(1e9, 1, 200), []string{busy}},
		{"late dispatcher", measured(20, 50, 200), []string{late}},
		{"both", measured(1e9, 50, 200), []string{busy, late}},
		// 5 ms of CPU in a 2 ms window is a scheduler tick, not a busy client.
		{"tiny window", record.ClientStats{CPUSeconds: 0.005, CPUPercent: 250, Sent: 200}, nil},
		{"just under a second", record.ClientStats{CPUSeconds: 0.99e7, CPUPercent: 1e9, Sent: 200}, nil},
		// The p99 of 99 lags is their maximum: one late send.
		{"few dispatches", measured(20, 50, 99), nil},
		{"enough dispatches", measured(20, 50, 100), []string{late}},
	}
	for _, tt := range tests {
		var a Aggregator
		a.Add(req(1, 0, 0, 10, 20, 5))
		run := &record.Run{Points: []record.PointClient{{Index: 0, Client: tt.client}}}
		s := Summarize(run, &a)
		var got []string
		for _, w := range s.Points[0].Warnings {
			for _, k := range []string{busy, late} {
				if strings.Contains(w, k) {
					got = append(got, k)
				}
			}
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: warnings %q, want ones about %q", tt.name, s.Points[0].Warnings, tt.want)
		}
		if s.Points[0].Client == nil || *s.Points[0].Client != tt.client {
			t.Errorf("%s: point client %+v, want the run's %+v", tt.name, s.Points[0].Client, tt.client)
		}
	}
}

// measured is a point's client figures over a 2 s window.
func measured(cpuPct, lagP99MS float64, sent int) record.ClientStats {
	return record.ClientStats{CPUSeconds: 2 * cpuPct / 100, CPUPercent: cpuPct, LagP99MS: lagP99MS, Sent: sent}
}

// TestSimBehind: a point's warning, its validity and the run's warning
// once the simulator skipped at least 5% of its model time, by telemetry
// over the window or by run.json's reading of the simulator at the
// point's bounds (the larger); none below that or without either.
func TestSimBehind(t *testing.T) {
	lost := func(ms float64) *telemetry.Point {
		return &telemetry.Point{Server: &telemetry.ServerPoint{SimClockLostMS: &ms}}
	}
	cases := []struct {
		name string
		t    *telemetry.Point
		read *float64 // run.json's
		want string   // "" for no warning
	}{
		{"no telemetry", nil, nil, ""},
		{"a real engine", &telemetry.Point{Server: &telemetry.ServerPoint{}}, nil, ""},
		{"a busy host's timer", lost(49), nil, ""},
		{"five percent", lost(50), nil, "the simulator skipped 50 ms of model time (5.0% of the point)"},
		{"a starved host", lost(250), nil, "the simulator skipped 250 ms of model time (25.0% of the point)"},
		// a point too short for the sampler, or --no-telemetry
		{"read at the bounds alone", nil, new(300.0), "the simulator skipped 300 ms of model time (30.0% of the point)"},
		{"the larger of the two", lost(60), new(10.0), "the simulator skipped 60 ms of model time (6.0% of the point)"},
		{"both small", lost(10), new(40.0), ""},
	}
	for _, c := range cases {
		// one point of 100 ms on the run clock at time scale 10: 1,000 ms of model time
		run := &record.Run{TimeScale: 10, Points: []record.PointClient{{Index: 0, Span: record.Span{StartNS: 1e8, EndNS: 2e8}, SimClockLostMS: c.read}}}
		s := &Summary{Run: run, Points: []PointSummary{{Index: 0, Load: record.Load{Concurrency: 4}, Telemetry: c.t}}}
		s.warnSimBehind()
		s.qualify()
		got := strings.Join(s.Points[0].Warnings, "\n")
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q…", c.name, got, c.want)
		}
		invalid := slices.Contains(s.Points[0].Validity.Codes(), InvalidSimBehind)
		runWarned := len(s.Warnings) == 1 && strings.HasPrefix(s.Warnings[0], SimBehindPrefix+" at c=4:")
		if behind := c.want != ""; invalid != behind || runWarned != behind {
			t.Errorf("%s: sim_behind %v, run warned %v (%q); want %v", c.name, invalid, runWarned, s.Warnings, behind)
		}
		// said once, however often asked
		s.warnSimBehind()
		if n := len(s.Points[0].Warnings); c.want != "" && (n != 1 || len(s.Warnings) != 1) {
			t.Errorf("%s: asked twice, %d point and %d run warnings, want 1 and 1", c.name, n, len(s.Warnings))
		}
	}
}

// TestBesideServer: a point's warning when the machine was busy, a server
// process on it was followed, and the client used a share of what the
// server did; none when any of the three is missing or small.
func TestBesideServer(t *testing.T) {
	host := func(hostPct, serverPct float64) *telemetry.Point {
		return &telemetry.Point{Host: &telemetry.HostPoint{HostCPUPercentMean: &hostPct, ServerCPUPercentMean: &serverPct}}
	}
	noServer := 99.0
	cases := []struct {
		name   string
		t      *telemetry.Point
		client record.ClientStats
		want   string // "" for no warning
	}{
		{"no telemetry", nil, measured(95, 0, 0), ""},
		{"no host readings", &telemetry.Point{}, measured(95, 0, 0), ""},
		{"no server process (the built-in simulator)", &telemetry.Point{Host: &telemetry.HostPoint{HostCPUPercentMean: &noServer}}, measured(95, 0, 0), ""},
		{"an idle machine", host(89.9, 100), measured(95, 0, 0), ""},
		{"a client that waits", host(99, 190), measured(9, 0, 0), ""},
		{"a small share of a large server", host(99, 1600), measured(150, 0, 0), ""},
		{"too short to judge", host(99, 100), record.ClientStats{CPUSeconds: 0.45, CPUPercent: 90}, ""},
		{"loopback throughput", host(98, 104), measured(92, 0, 0),
			"the client and the server shared this machine: its CPUs were 98% busy, the server's process used 104% of one core and the client 92%"},
		{"at the thresholds", host(90, 100), measured(10, 0, 0), "its CPUs were 90% busy, the server's process used 100% of one core and the client 10%"},
	}
	for _, c := range cases {
		got := besideServer(c.t, &c.client, 2)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q…", c.name, got, c.want)
		}
	}
	if got := besideServer(host(99, 100), nil, 2); got != "" {
		t.Errorf("no client figures: %q", got)
	}
	// The advice: fewer cores, unless the client had one already.
	for cpus, want := range map[int]string{2: "(run the client on another machine, or on fewer cores with --cpus)", 1: "(run the client on another machine)"} {
		if got := besideServer(host(99, 100), ptrClient(measured(80, 0, 0)), cpus); !strings.HasSuffix(got, want) {
			t.Errorf("client on %d cores: %q, want it to end %q", cpus, got, want)
		}
	}
}

func ptrClient(c record.ClientStats) *record.ClientStats { return &c }

func TestStolen(t *testing.T) {
	steal := func(pct float64) *telemetry.Point {
		return &telemetry.Point{Host: &telemetry.HostPoint{StealPercentMean: &pct}}
	}
	for _, c := range []struct {
		name string
		t    *telemetry.Point
		want string // "" for no warning
	}{
		{"no telemetry", nil, ""},
		{"no host readings", &telemetry.Point{}, ""},
		{"no steal read (a node exporter without the mode)", &telemetry.Point{Host: &telemetry.HostPoint{}}, ""},
		{"a quiet virtual machine", steal(0.7), ""},
		{"just below", steal(4.99), ""},
		{"at the threshold", steal(5), StealPrefix + ": the hypervisor gave 5% of the host's CPU time to other guests (steal, host telemetry)"},
		{"a noisy neighbour", steal(23.4), "gave 23% of the host's CPU time"},
	} {
		got := stolen(c.t)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q…", c.name, got, c.want)
		}
	}
}

// TestAddTelemetryWarnsPreemptionsFirst: preemptions over a point's
// window are its first warning, with their count and cause; none, no
// warning.
func TestAddTelemetryWarnsPreemptionsFirst(t *testing.T) {
	for _, n := range []float64{0, 158} {
		run := &record.Run{Points: []record.PointClient{{Index: 0, Span: record.Span{StartNS: 1, EndNS: 2e9}}}}
		s := &Summary{Run: run, Points: []PointSummary{{Index: 0, Warnings: []string{"an earlier warning"}}}}
		var samples []telemetry.Sample
		for i, c := range []float64{10, 10 + n} {
			kv := 0.99
			samples = append(samples, telemetry.Sample{TNS: int64(i+1) * 5e8, Source: telemetry.KindServer,
				Server: &telemetry.Server{Preemptions: &c, KVCacheUsage: &kv}})
		}
		s.AddTelemetry(telemetry.SliceScan(samples))
		w := s.Points[0].Warnings
		want := PreemptedPrefix + " 158 times: its KV cache ran out (peak 99% full)"
		switch {
		case n == 0 && len(w) != 1:
			t.Errorf("no preemption: warnings %q", w)
		case n > 0 && (len(w) != 2 || !strings.HasPrefix(w[0], want)):
			t.Errorf("158 preemptions: warnings %q, want first %q…", w, want)
		}
	}
}

// TestAddTelemetryWarnsBesideServer: the point's summary, from run.json's
// client figures and the host samples of its window, gets the warning
// (and the hypervisor's, for the steal among them); the same run with an
// idle machine does not.
func TestAddTelemetryWarnsBesideServer(t *testing.T) {
	for _, busy := range []float64{99, 40} {
		client := measured(90, 0, 0)
		run := &record.Run{ClientCPUs: 2, Points: []record.PointClient{{Index: 0, Client: client, Span: record.Span{StartNS: 1, EndNS: 2e9}}}}
		s := &Summary{Run: run, Points: []PointSummary{{Index: 0, Client: &client}}}
		var samples []telemetry.Sample
		for i := range 3 {
			server, steal := 100.0, map[float64]float64{99: 12, 40: 1}[busy]
			samples = append(samples, telemetry.Sample{TNS: int64(i+1) * 5e8, Source: telemetry.KindHost,
				Host: &telemetry.Host{CPUPercent: &busy, ServerCPUPercent: &server, StealPercent: &steal}})
		}
		s.AddTelemetry(telemetry.SliceScan(samples))
		got := strings.Join(s.Points[0].Warnings, "\n")
		if want := BesideServerPrefix + ": its CPUs were 99% busy, the server's process used 100% of one core and the client 90%"; busy == 99 && !strings.Contains(got, want) {
			t.Errorf("busy machine: warnings %q, want %q", got, want)
		}
		if busy < 90 && (strings.Contains(got, BesideServerPrefix) || strings.Contains(got, StealPrefix)) {
			t.Errorf("idle machine: warnings %q", got)
		}
		if want := StealPrefix + ": the hypervisor gave 12%"; busy == 99 && !strings.Contains(got, want) {
			t.Errorf("12%% stolen: warnings %q, want %q", got, want)
		}
	}
}
