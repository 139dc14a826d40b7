package telemetry

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// TestClientSource: CPU share over each interval of the given clock, the
// lag reading when the runner has one and absent when it has none.
func TestClientSource(t *testing.T) {
	cpu, wall := 10.0, time.Unix(1e9, 0)
	lags := []struct {
		d  time.Duration
		ok bool
	}{{7500 * time.Microsecond, true}, {0, false}}
	lag := func() (time.Duration, bool) {
		l := lags[0]
		lags = lags[1:]
		return l.d, l.ok
	}
	c := newClientSource(func() float64 { return cpu }, lag, func() time.Time { return wall })
	read := func(dcpu float64, dt time.Duration) *Client {
		t.Helper()
		cpu, wall = cpu+dcpu, wall.Add(dt)
		s, err := c.Read(context.Background(), 42)
		if err != nil || len(s) != 1 || s[0].Source != KindClient || s[0].TNS != 42 || s[0].Client == nil {
			t.Fatalf("got %+v, %v", s, err)
		}
		return s[0].Client
	}
	r := read(0.5, 2*time.Second)
	if r.CPUPercent != 25 || r.DispatchLagMaxMS == nil || *r.DispatchLagMaxMS != 7.5 {
		t.Errorf("reading 1: cpu %v%%, lag %v; want 25 and 7.5 ms", r.CPUPercent, r.DispatchLagMaxMS)
	}
	if r.Goroutines < 1 || r.HeapBytes <= 0 {
		t.Errorf("reading 1: %d goroutines, heap %v bytes", r.Goroutines, r.HeapBytes)
	}
	r = read(3, time.Second)
	if r.CPUPercent != 300 || r.DispatchLagMaxMS != nil {
		t.Errorf("reading 2: cpu %v%%, lag %v; want 300 and none", r.CPUPercent, r.DispatchLagMaxMS)
	}
	closed := newClientSource(func() float64 { return 0 }, nil, time.Now)
	if s, _ := closed.Read(context.Background(), 0); s[0].Client.DispatchLagMaxMS != nil {
		t.Error("a lag without a runner to read it from")
	}
}

func clientAt(t int64, cpu float64, goroutines int) Sample {
	return Sample{TNS: t, Source: KindClient, Instance: InstanceClient, Client: &Client{CPUPercent: cpu, Goroutines: goroutines}}
}

func TestSummarizeClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []Sample
		want    *ClientPoint
	}{
		{"no samples", nil, nil},
		{"only other sources", []Sample{hostAt(5, Host{RAMAvailBytes: hostVal(1)})}, nil},
		// Mean and peak of the three inside [10, 30]; the ones outside
		// count for nothing.
		{"a window of three", []Sample{
			clientAt(9, 500, 900),
			clientAt(10, 20, 10),
			clientAt(20, 80, 30),
			clientAt(30, 50, 20),
			clientAt(31, 500, 900),
		}, &ClientPoint{CPUPercentMean: 50, CPUPercentMax: 80, GoroutinesMax: 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summarizeClient(Window{From: 10, To: 30, Scale: 1, Samples: tc.samples})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
