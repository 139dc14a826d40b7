package telemetry

import (
	"errors"
	"net"
	"net/url"
	"strconv"
)

// InstanceProcfs is the Instance of the samples and events read from
// this machine's proc file system.
const InstanceProcfs = "procfs"

// ErrHostUnavailable: this platform has no proc file system to read; the
// run goes on without host telemetry.
var ErrHostUnavailable = errors.New("host telemetry unavailable")

// ErrNoServerProcess: the server pid given (--server-pid) names no
// running process.
var ErrNoServerProcess = errors.New("no such process")

// HostOptions says which server process the host source follows.
type HostOptions struct {
	// PID is --server-pid: the server's process; 0 to find it by Port.
	PID int
	// Port is the target's port when the target is on this machine's
	// loopback (LoopbackPort); 0 when it is elsewhere: then only the
	// machine itself is read.
	Port int
	// InProcess: the target is the built-in simulator, which serves from
	// inside servebench: there is no server process apart from the client.
	InProcess bool
	// ProcRoot is where the proc file system is mounted; "" for /proc.
	ProcRoot string
}

// inProcessNote says why a simulated run reports no server process.
const inProcessNote = "the server is the built-in simulator inside servebench: its CPU and memory are the client's (client telemetry), not reported as a server's"

// LoopbackPort is the port of a target on this machine's loopback
// interface (localhost, 127.0.0.0/8, ::1), whose listening process can be
// found; 0 for any other host.
func LoopbackPort(u *url.URL) int {
	if u == nil {
		return 0
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0
	}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// hostAcc summarises the host samples of one window as they come: the
// server tree's peak resident memory and mean CPU, the least memory the
// machine had available, its mean CPU and the hypervisor's mean steal.
type hostAcc struct {
	from, to         int64
	rss, avail       optExtremes
	cpu, host, steal optMean
}

func (a *hostAcc) add(s *Sample) {
	if s.Source != KindHost || s.Host == nil || s.TNS < a.from || s.TNS > a.to {
		return
	}
	a.rss.add(s.Host.ServerRSSBytes)
	a.avail.add(s.Host.RAMAvailBytes)
	a.cpu.add(s.Host.ServerCPUPercent)
	a.host.add(s.Host.CPUPercent)
	a.steal.add(s.Host.StealPercent)
}

// point is the window's host figures; a figure no sample had is absent,
// and nil when none had any.
func (a *hostAcc) point() *HostPoint {
	p := HostPoint{ServerRSSBytesMax: a.rss.max, ServerCPUPercentMean: a.cpu.value(),
		RAMAvailableBytesMin: a.avail.min, HostCPUPercentMean: a.host.value(), StealPercentMean: a.steal.value()}
	if p == (HostPoint{}) {
		return nil
	}
	return &p
}

// summarizeHost summarises the window's host samples (hostAcc).
func summarizeHost(w Window) *HostPoint {
	a := hostAcc{from: w.From, to: w.To}
	for i := range w.Samples {
		a.add(&w.Samples[i])
	}
	return a.point()
}

// optExtremes follows the extremes of an optional series.
type optExtremes struct{ max, min *float64 }

func (m *optExtremes) add(v *float64) {
	if v == nil {
		return
	}
	if m.max == nil {
		a, b := *v, *v
		m.max, m.min = &a, &b
		return
	}
	*m.max, *m.min = max(*m.max, *v), min(*m.min, *v)
}

// optMean is the mean of an optional series.
type optMean struct {
	sum float64
	n   int
}

func (m *optMean) add(v *float64) {
	if v != nil {
		m.sum += *v
		m.n++
	}
}

func (m *optMean) value() *float64 {
	if m.n == 0 {
		return nil
	}
	v := m.sum / float64(m.n)
	return &v
}
