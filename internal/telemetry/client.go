package telemetry

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// InstanceClient is the Instance of the load generator's own samples.
const InstanceClient = "servebench"

// heapMetric is the bytes of live and not yet swept heap objects: what
// runtime.MemStats calls HeapAlloc, read without stopping the world.
const heapMetric = "/memory/classes/heap/objects:bytes"

// ClientSource reads the load generator itself: its CPU use, goroutines,
// heap, and how late the open loop dispatched since the last reading.
type ClientSource struct {
	cpu   func() float64
	lag   func() (time.Duration, bool)
	clock func() time.Time

	prevCPU  float64
	prevWall time.Time
	heap     []metrics.Sample
}

// NewClientSource reads the process's CPU seconds from cpu (the load
// package's CPUSeconds) and, when lag is not nil, the largest dispatch
// lag since its previous call (the load runner's TakeDispatchLag).
func NewClientSource(cpu func() float64, lag func() (time.Duration, bool)) *ClientSource {
	return newClientSource(cpu, lag, time.Now)
}

func newClientSource(cpu func() float64, lag func() (time.Duration, bool), clock func() time.Time) *ClientSource {
	c := &ClientSource{cpu: cpu, lag: lag, clock: clock, heap: []metrics.Sample{{Name: heapMetric}}}
	// The first reading's CPU share is over the time since the source was
	// made, so no reading lacks it.
	c.prevCPU, c.prevWall = cpu(), clock()
	return c
}

func (c *ClientSource) Name() string { return "the client itself" }

// Read takes one reading; it cannot fail.
func (c *ClientSource) Read(ctx context.Context, now int64) ([]Sample, error) {
	cpu, wall := c.cpu(), c.clock()
	r := &Client{Goroutines: runtime.NumGoroutine()}
	if dt := wall.Sub(c.prevWall).Seconds(); dt > 0 {
		r.CPUPercent = 100 * max(cpu-c.prevCPU, 0) / dt
	}
	c.prevCPU, c.prevWall = cpu, wall
	metrics.Read(c.heap)
	if v := c.heap[0].Value; v.Kind() == metrics.KindUint64 {
		r.HeapBytes = float64(v.Uint64())
	}
	if c.lag != nil {
		if d, ok := c.lag(); ok {
			ms := float64(d) / 1e6
			r.DispatchLagMaxMS = &ms
		}
	}
	return []Sample{{TNS: now, Source: KindClient, Instance: InstanceClient, Client: r}}, nil
}

// clientAcc summarises the client samples of one window as they come:
// the mean and peak CPU share (of one core) and the most goroutines.
type clientAcc struct {
	from, to int64
	p        ClientPoint
	n        int
}

func (a *clientAcc) add(s *Sample) {
	if s.Source != KindClient || s.Client == nil || s.TNS < a.from || s.TNS > a.to {
		return
	}
	a.n++
	a.p.CPUPercentMean += s.Client.CPUPercent
	a.p.CPUPercentMax = max(a.p.CPUPercentMax, s.Client.CPUPercent)
	a.p.GoroutinesMax = max(a.p.GoroutinesMax, s.Client.Goroutines)
}

// point is the window's client figures; nil when it had no client sample.
func (a *clientAcc) point() *ClientPoint {
	if a.n == 0 {
		return nil
	}
	p := a.p
	p.CPUPercentMean /= float64(a.n)
	return &p
}

// summarizeClient summarises the window's client samples (clientAcc).
func summarizeClient(w Window) *ClientPoint {
	a := clientAcc{from: w.From, to: w.To}
	for i := range w.Samples {
		a.add(&w.Samples[i])
	}
	return a.point()
}
