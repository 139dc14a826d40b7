package metrics

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

// Each point's validity comes from its own figures: the load held, the
// client's CPU and dispatch lag against its cores, the simulator's lost
// model time against the point's window, the server's events.
func TestQualifyReasonCodes(t *testing.T) {
	lost := func(ms float64) *telemetry.Point {
		return &telemetry.Point{Server: &telemetry.ServerPoint{SimClockLostMS: &ms}}
	}
	tests := []struct {
		name  string
		point PointSummary
		codes []string
		text  string
	}{
		{"valid", PointSummary{Index: 0, LoadHeld: true, Requests: Requests{Completed: 10}}, nil, ""},
		{"not held (closed)", PointSummary{Index: 0, Load: record.Load{Concurrency: 8}, Requests: Requests{Completed: 3},
			ConcurrencyAchieved: 3, ConcurrencyHeldShare: 0}, []string{InvalidLoadNotHeld}, "3.0 of 8 users in flight"},
		{"not held (open)", PointSummary{Index: 0, Load: record.Load{Rate: 10}, Requests: Requests{Completed: 30},
			AchievedRate: 5, OfferedRate: 10}, []string{InvalidLoadNotHeld}, "5 req/s sent of the 10 offered"},
		{"all failed says so elsewhere", PointSummary{Index: 0, Load: record.Load{Concurrency: 8}, Requests: Requests{Failed: 3}, AllFailed: true}, nil, ""},
		{"client CPU on its 2 cores", PointSummary{Index: 0, LoadHeld: true, Requests: Requests{Completed: 10},
			Client: &record.ClientStats{CPUPercent: 190, CPUSeconds: 1.9}}, []string{InvalidClientSaturated}, "190% CPU"},
		{"client CPU below its 2 cores", PointSummary{Index: 0, LoadHeld: true, Requests: Requests{Completed: 10},
			Client: &record.ClientStats{CPUPercent: 170, CPUSeconds: 1.7}}, nil, ""},
		{"dispatch lag", PointSummary{Index: 0, LoadHeld: true, Requests: Requests{Completed: 200},
			Client: &record.ClientStats{LagP99MS: 25, Sent: 200}}, []string{InvalidClientSaturated}, "dispatch lag p99 was 25.0 ms"},
		{"simulator 6% behind", PointSummary{Index: 0, LoadHeld: true, Requests: Requests{Completed: 10}, Telemetry: lost(600)},
			[]string{InvalidSimBehind}, "time scale 10 and skipped 6.0%"},
		{"simulator 4% behind: noise", PointSummary{Index: 0, LoadHeld: true, Requests: Requests{Completed: 10}, Telemetry: lost(400)}, nil, ""},
		{"out of memory", PointSummary{Index: 0, LoadHeld: true, Requests: Requests{Completed: 10},
			Telemetry: &telemetry.Point{Events: map[string]int{telemetry.EventOOM: 1, telemetry.EventThrottle: 3}}}, []string{InvalidServerEvent}, "1 oom"},
		{"a throttle is no server event", PointSummary{Index: 0, LoadHeld: true, Requests: Requests{Completed: 10},
			Telemetry: &telemetry.Point{Events: map[string]int{telemetry.EventThrottle: 3}}}, nil, ""},
	}
	for _, tt := range tests {
		// a point of 1 s on the run clock at time scale 10: 10 s of model time
		run := &record.Run{TimeScale: 10, ClientCPUs: 2, Points: []record.PointClient{{Index: 0, Span: record.Span{StartNS: 1e9, EndNS: 2e9}}}}
		s := &Summary{Run: run, Points: []PointSummary{tt.point}}
		s.qualify()
		v := s.Points[0].Validity
		if got := v.Codes(); strings.Join(got, ",") != strings.Join(tt.codes, ",") || v.Valid() != (len(tt.codes) == 0) {
			t.Errorf("%s: codes %v, want %v (%s)", tt.name, got, tt.codes, v)
		}
		if !strings.Contains(v.String(), tt.text) {
			t.Errorf("%s: %q lacks %q", tt.name, v.String(), tt.text)
		}
	}
}

// summary.json writes a point's validity as {"valid", "reasons"}, never
// a null list, and reads it back.
func TestValidityJSON(t *testing.T) {
	var v Validity
	b, _ := json.Marshal(v)
	if string(b) != `{"valid":true,"reasons":[]}` {
		t.Errorf("valid: %s", b)
	}
	v.Add(Reason{InvalidSimBehind, "skipped 6%"})
	v.Add(Reason{InvalidSimBehind, "again"}) // one per code
	b, _ = json.Marshal(v)
	var back Validity
	if err := json.Unmarshal(b, &back); err != nil || string(b) != `{"valid":false,"reasons":[{"code":"sim_behind","text":"skipped 6%"}]}` || back.String() != "sim_behind: skipped 6%" {
		t.Errorf("invalid: %s → %v (%v)", b, back, err)
	}
}
