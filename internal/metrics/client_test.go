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
		// 300% of one core on 4 cores is under 80% of them.
		{"under on 4 cores", 4, 300, ""},
		{"over on 4 cores", 4, 330, "the client used 330% CPU (of one core) on 4 cores"},
		// 330% is under 80% of 8 cores: the reader's machine is irrelevant.
		{"under on 8 cores", 8, 330, ""},
		{"one core", 1, 90, "on 1 cores"},
		{"not recorded", 0, 90, "on a machine whose core count the run did not record"},
		{"not recorded, idle", 0, 50, ""},
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
