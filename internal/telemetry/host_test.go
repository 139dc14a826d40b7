package telemetry

import (
	"fmt"
	"net/url"
	"reflect"
	"testing"
)

func hostVal(v float64) *float64 { return &v }

func hostAt(t int64, h Host) Sample {
	return Sample{TNS: t, Source: KindHost, Instance: InstanceProcfs, Host: &h}
}

func TestSummarizeHost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		from    int64
		to      int64
		samples []Sample
		want    *HostPoint
	}{
		{"no samples", 0, 10, nil, nil},
		// Peak RSS, mean server CPU, least available, mean machine CPU;
		// the samples outside [from, to] count for nothing.
		{"a window of three", 10, 30, []Sample{
			hostAt(5, Host{ServerRSSBytes: hostVal(9e9), ServerCPUPercent: hostVal(900), RAMAvailBytes: hostVal(1), CPUPercent: hostVal(99)}),
			hostAt(10, Host{ServerRSSBytes: hostVal(100), ServerCPUPercent: hostVal(50), RAMAvailBytes: hostVal(800), CPUPercent: hostVal(20)}),
			{TNS: 15, Source: KindEvent, Event: &Event{Kind: EventServerProcess}},
			hostAt(20, Host{ServerRSSBytes: hostVal(300), ServerCPUPercent: hostVal(150), RAMAvailBytes: hostVal(600), CPUPercent: hostVal(40), StealPercent: hostVal(2)}),
			hostAt(30, Host{ServerRSSBytes: hostVal(200), ServerCPUPercent: hostVal(100), RAMAvailBytes: hostVal(700), CPUPercent: hostVal(60), StealPercent: hostVal(10)}),
			hostAt(31, Host{ServerRSSBytes: hostVal(9e9), RAMAvailBytes: hostVal(1), StealPercent: hostVal(90)}),
		}, &HostPoint{ServerRSSBytesMax: hostVal(300), ServerCPUPercentMean: hostVal(100), RAMAvailableBytesMin: hostVal(600), HostCPUPercentMean: hostVal(40), StealPercentMean: hostVal(6)}},
		// The first reading has no CPU interval yet; the server's figures
		// stop when it exits: each mean is over the samples that had it.
		{"figures missing from some samples", 0, 30, []Sample{
			hostAt(0, Host{ServerRSSBytes: hostVal(100), RAMAvailBytes: hostVal(800)}),
			hostAt(10, Host{ServerRSSBytes: hostVal(100), ServerCPUPercent: hostVal(30), RAMAvailBytes: hostVal(800), CPUPercent: hostVal(10)}),
			hostAt(20, Host{RAMAvailBytes: hostVal(900), CPUPercent: hostVal(20)}),
		}, &HostPoint{ServerRSSBytesMax: hostVal(100), ServerCPUPercentMean: hostVal(30), RAMAvailableBytesMin: hostVal(800), HostCPUPercentMean: hostVal(15)}},
		// A simulated run: the machine only, no server figures at all.
		{"machine only", 0, 10, []Sample{hostAt(5, Host{RAMAvailBytes: hostVal(5)})},
			&HostPoint{RAMAvailableBytesMin: hostVal(5)}},
		{"a host sample with nothing read", 0, 10, []Sample{hostAt(5, Host{})}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summarizeHost(Window{From: tc.from, To: tc.to, Scale: 1, Samples: tc.samples})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %s\nwant %s", hostDump(got), hostDump(tc.want))
			}
		})
	}
}

func TestLoopbackPort(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want int
	}{
		{"http://127.0.0.1:11434", 11434},
		{"http://localhost:8000/v1", 8000},
		{"http://[::1]:9000", 9000},
		{"http://127.0.0.2:81", 81},
		{"http://localhost", 80},
		{"https://localhost/v1", 443},
		{"http://10.0.0.5:8000", 0},
		{"http://gpu-box:8000", 0},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := LoopbackPort(u); got != tc.want {
			t.Errorf("%s: port %d, want %d", tc.url, got, tc.want)
		}
	}
}

// hostDump shows a point's optional figures by value.
func hostDump(p *HostPoint) string {
	if p == nil {
		return "nil"
	}
	v := func(x *float64) any {
		if x == nil {
			return nil
		}
		return *x
	}
	return fmt.Sprintf("rss max %v, server cpu mean %v, available min %v, cpu mean %v, steal mean %v",
		v(p.ServerRSSBytesMax), v(p.ServerCPUPercentMean), v(p.RAMAvailableBytesMin), v(p.HostCPUPercentMean), v(p.StealPercentMean))
}
