package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/sim"
	"github.com/servebench/servebench/internal/telemetry"
)

// simSources are what a run against a vLLM-like server on this machine
// samples: the in-process simulator's /metrics (vLLM's names, buckets and
// labels), this machine and the server process (procfs), and the client.
func simSources(b *testing.B) []telemetry.Source {
	srv, err := sim.New(sim.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	url, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	t, err := backend.NewTarget(backend.TargetOptions{URL: url})
	if err != nil {
		b.Fatal(err)
	}
	srcs, _, err := telemetry.Sources(context.Background(), telemetry.Options{Target: t})
	if err != nil {
		b.Fatal(err)
	}
	return append(srcs, telemetry.NewClientSource(load.CPUSeconds, nil))
}

// BenchmarkSamplingRound: the CPU one sampling round costs, every source
// read and its samples encoded as telemetry.jsonl lines; at one round a
// second, cpu_ms_per_round/10 is the share of one core. Target: under 1%.
// The process's CPU time includes the simulator serving its /metrics,
// the server's side of the scrape: an upper bound on the client's.
func BenchmarkSamplingRound(b *testing.B) {
	srcs := simSources(b)
	enc := json.NewEncoder(io.Discard)
	ctx := context.Background()
	cpu0 := load.CPUSeconds()
	for i := range b.N {
		for _, s := range srcs {
			got, err := s.Read(ctx, int64(i))
			if err != nil {
				b.Fatal(err)
			}
			for _, smp := range got {
				enc.Encode(smp)
			}
		}
	}
	cpu := (load.CPUSeconds() - cpu0) / float64(b.N)
	b.ReportMetric(cpu*1e3, "cpu_ms_per_round")
	b.ReportMetric(cpu*100, "core_pct_at_1s")
	b.ReportMetric(float64(len(srcs)), "sources")
}

// BenchmarkTimestampLagTelemetry runs BenchmarkTimestampLag's scenario
// (servebench's client) without telemetry and with the simulator's
// /metrics, procfs and the client sampled every second, and every 100 ms
// (the interval against the simulator), side by side: the lag must not
// move beyond its run-to-run noise.
func BenchmarkTimestampLagTelemetry(b *testing.B) {
	for _, streams := range []int{16, 64} {
		for _, every := range []time.Duration{0, time.Second, 100 * time.Millisecond} {
			name := "off"
			if every > 0 {
				name = every.String()
			}
			b.Run(fmt.Sprintf("streams=%d/telemetry=%s", streams, name), func(b *testing.B) {
				var srcs []telemetry.Source
				if every > 0 {
					srcs = simSources(b)
				}
				for range b.N {
					timestampLagSampled(b, streams, srcs, every)
				}
			})
		}
	}
}
