package telemetry

import (
	"context"
	"testing"

	"github.com/servebench/servebench/internal/sim"
)

// BenchmarkServerSourceRead is one scrape of a two-engine vLLM page over
// loopback: what sampling the server costs the client each interval.
func BenchmarkServerSourceRead(b *testing.B) {
	t := &testing.T{}
	_, srv := servePage(t, readTestdata(t, "vllm.txt"))
	defer srv.Close()
	src := NewServerSource(Endpoint{URL: srv.URL})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Read(context.Background(), 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServerSourceReadSimulator scrapes the simulator's full vLLM page.
func BenchmarkServerSourceReadSimulator(b *testing.B) {
	s, err := sim.New(sim.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	base, err := s.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	src := NewServerSource(Endpoint{URL: base + "/metrics"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Read(context.Background(), 0); err != nil {
			b.Fatal(err)
		}
	}
}
