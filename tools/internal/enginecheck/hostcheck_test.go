package enginecheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/plan"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/telemetry"
)

const hostMiB = 1 << 20

// hostRun writes a run directory: host samples of a server tree (rss in
// MiB, cpu %, processes) and a summary whose points have host figures
// (nil: that point has none).
func hostRun(t *testing.T, samples []telemetry.Host, points []*telemetry.HostPoint) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i, h := range samples {
		line, _ := json.Marshal(telemetry.Sample{TNS: int64(i) * 1e9, Source: telemetry.KindHost, Instance: telemetry.InstanceProcfs, Host: &h})
		b.Write(append(line, '\n'))
	}
	// A node exporter's host reading is not the server's tree.
	line, _ := json.Marshal(telemetry.Sample{Source: telemetry.KindHost, Instance: "node:http://x", Host: &telemetry.Host{ServerPID: 1, ServerProcesses: 9, ServerRSSBytes: hostPtr(1e12)}})
	b.Write(append(line, '\n'))
	type point struct {
		Telemetry *telemetry.Point `json:"telemetry,omitempty"`
	}
	var s struct {
		Points []point `json:"points"`
	}
	for _, h := range points {
		p := point{}
		if h != nil {
			p.Telemetry = &telemetry.Point{Host: h}
		}
		s.Points = append(s.Points, p)
	}
	sum, _ := json.Marshal(s)
	for name, data := range map[string][]byte{rundir.TelemetryFile: []byte(b.String()), "summary.json": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func hostPtr(v float64) *float64 { return &v }

func hostTree(rssMiB, cpu float64, procs int) telemetry.Host {
	return telemetry.Host{ServerPID: 100, ServerProcesses: procs, ServerRSSBytes: hostPtr(rssMiB * hostMiB), ServerCPUPercent: hostPtr(cpu)}
}

func hostPt(rssMiB, cpu float64) *telemetry.HostPoint {
	return &telemetry.HostPoint{ServerRSSBytesMax: hostPtr(rssMiB * hostMiB), ServerCPUPercentMean: hostPtr(cpu)}
}

// The test model's plan: 28.2 MiB of weights, 192.5 MiB in all.
var testMem = PlanMemory{Device: "CPU", Weights: 29603392, Total: 201829902}

func TestCheckHost(t *testing.T) {
	both := []*telemetry.HostPoint{hostPt(300, 90), hostPt(320, 95)}
	for _, tc := range []struct {
		name    string
		samples []telemetry.Host
		points  []*telemetry.HostPoint
		want    string // a problem's text; "" for none
	}{
		// Server and runner, the weights and KV cache resident, busy.
		{"an engine under load", []telemetry.Host{hostTree(250, 0, 2), hostTree(320, 95, 2)}, both, ""},
		{"no server followed", []telemetry.Host{{ServerPID: 0, RAMAvailBytes: hostPtr(1)}}, both, "no host sample followed the server"},
		{"no runner", []telemetry.Host{hostTree(250, 90, 1)}, both, "at most 1 process: the runner child was not found"},
		{"never busy", []telemetry.Host{hostTree(250, 0, 2)}, both, "CPU 0.0% at their peaks"},
		{"a point without host figures", []telemetry.Host{hostTree(320, 95, 2)}, []*telemetry.HostPoint{hostPt(300, 90), nil}, "1 of 2 load points"},
		{"a point with CPU zero", []telemetry.Host{hostTree(320, 95, 2)}, []*telemetry.HostPoint{hostPt(300, 90), hostPt(300, 0)}, "1 of 2 load points"},
		// 25 MiB is under 90% of 28.2 MiB: not the process with the model.
		{"weights not resident", []telemetry.Host{hostTree(25, 95, 2)}, both, "under 90% of the planned weights (28.2 MiB)"},
		// 192.5 MiB + 2 x 256 MiB = 704.5 MiB.
		{"absurdly large", []telemetry.Host{hostTree(705, 95, 2)}, both, "over the plan's total 192.5 MiB plus 256.0 MiB per process (2)"},
		{"just under the bound", []telemetry.Host{hostTree(704, 95, 2)}, both, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := CheckHost(hostRun(t, tc.samples, tc.points), testMem)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(c.Problems, "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("problems:\n%s\nwant one containing %q", got, tc.want)
			}
		})
	}
}

func TestCheckHostUnreadable(t *testing.T) {
	if _, err := CheckHost(t.TempDir(), testMem); err == nil {
		t.Error("a run without telemetry.jsonl passed")
	}
}

func TestReadPlanMemory(t *testing.T) {
	doc := func(weights, total int64) []byte {
		return fmt.Appendf(nil, `{"schema":%q,"devices":[{"device":"CPU-DDR5-2ch","budget":{"weights_bytes":%d,"total_bytes":%d}}]}`, plan.Schema, weights, total)
	}
	got, err := ReadPlanMemory(doc(29603392, 201829902))
	if err != nil || got != (PlanMemory{Device: "CPU-DDR5-2ch", Weights: 29603392, Total: 201829902}) {
		t.Errorf("got %+v, %v", got, err)
	}
	for _, bad := range [][]byte{[]byte("{"), []byte(`{"schema":"other"}`), doc(0, 10)} {
		if _, err := ReadPlanMemory(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
