package metrics

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// TestClientCPUWarningUsesRecordedCores: the client-CPU warning judges a
// point against the cores of the machine that ran it, as run.json
// records them, whatever machine summarises the records.
func TestClientCPUWarningUsesRecordedCores(t *testing.T) {
	tests := []struct {
		name   string
		cpus   int
		cpuPct float64
		want   string // "" for no warning
	}{
		// 350% of one core on 4 cores is under 90% of them (360%).
		{"under on 4 cores", 4, 350, ""},
		{"over on 4 cores", 4, 370, "the client used 370% CPU (of one core) on 4 cores"},
		// 370% is under 90% of 8 cores: the reader's machine is irrelevant.
		{"under on 8 cores", 8, 370, ""},
		{"one core", 1, 95, "on 1 core:"},
		{"not recorded", 0, 95, "on a machine whose core count the run did not record"},
		{"not recorded, idle", 0, 85, ""},
	}
	for _, tt := range tests {
		var a Aggregator
		a.Add(&record.Record{Point: 0, Load: record.Load{Concurrency: 1}, Phase: record.PhaseMeasured, SentNS: 1, EndNS: 2})
		run := &record.Run{ClientCPUs: tt.cpus, Points: []record.PointClient{
			{Index: 0, Load: record.Load{Concurrency: 1}, Client: measured(tt.cpuPct, 0, 1)}}}
		s := Summarize(run, &a)
		got := strings.Join(s.Points[0].Warnings, "\n")
		var cpu []string
		for _, w := range s.Points[0].Warnings {
			if strings.Contains(w, "CPU") {
				cpu = append(cpu, w)
			}
		}
		if tt.want == "" && len(cpu) > 0 || tt.want != "" && (len(cpu) != 1 || !strings.Contains(cpu[0], tt.want)) {
			t.Errorf("%s: warnings %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestClientLimited: the run's first warning names every point where the
// client was near saturation, and why; a run without one has none.
func TestClientLimited(t *testing.T) {
	tests := []struct {
		name    string
		clients []record.ClientStats // c=1, c=2, ...
		want    string               // the first run warning; "" for none
	}{
		{"quiet", []record.ClientStats{measured(50, 0, 200), measured(20, 9, 200)}, ""},
		// 181% of one core is over 90% of 2 cores; a lag p99 of 10.5 ms over 10.
		{"busy and late", []record.ClientStats{measured(50, 1, 200), measured(181, 0, 200), measured(190, 10.5, 200)},
			"the client was near saturation at c=2 (CPU 181% of one core on 2 cores); c=3 (CPU 190% of one core on 2 cores, dispatch lag p99 10.5 ms): the figures there may be limited by the client, not the server"},
		// Too few sends for a p99: one late send is not the client's pace.
		{"late but thin", []record.ClientStats{measured(50, 30, 99)}, ""},
	}
	for _, tt := range tests {
		var a Aggregator
		run := &record.Run{ClientCPUs: 2, Interrupted: true}
		for i, c := range tt.clients {
			l := record.Load{Concurrency: i + 1}
			a.Add(&record.Record{Point: i, Load: l, Phase: record.PhaseMeasured, SentNS: 1, EndNS: 2})
			run.Points = append(run.Points, record.PointClient{Index: i, Load: l, Client: c})
		}
		s := Summarize(run, &a)
		first := s.Warnings[0]
		if tt.want == "" {
			if strings.HasPrefix(first, ClientLimitedPrefix) {
				t.Errorf("%s: %q", tt.name, first)
			}
			continue
		}
		// First, before the interruption's warning.
		if !strings.HasPrefix(first, tt.want) || len(s.Warnings) != 2 {
			t.Errorf("%s: warnings %q\nwant first %q", tt.name, s.Warnings, tt.want)
		}
	}
}
