package telemetry

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/procfs"
)

// hostSource reads the machine's memory and CPU and, when it follows one,
// the server process with all its descendants (Ollama serves from a
// runner process it starts and restarts).
type hostSource struct {
	fs procfs.FS
	// port: the server was found by it, and is looked for again there
	// after it exits (a restart); 0 when given by pid or not followed.
	port int

	root     procInfo // Key.PID 0: no server process followed
	prev     map[procKey]procInfo
	prevWall time.Time
	lastRSS  float64
	lastN    int
	prevCPU  *procfs.CPUStat // the machine's, from /proc/stat
	clock    func() time.Time
}

// NewHostSource returns the host source and a line saying what it follows.
// A --server-pid that names no process is ErrNoServerProcess; a server not found
// by its port is said in the note, and the machine is still read.
func NewHostSource(o HostOptions) (Source, string, error) {
	s, note, err := newHostSource(o, time.Now)
	if err != nil {
		return nil, "", err // not a nil *hostSource in a non-nil Source
	}
	return s, note, nil
}

// newHostSource is NewHostSource with the clock CPU intervals are timed
// by (tests give their own).
func newHostSource(o HostOptions, clock func() time.Time) (*hostSource, string, error) {
	root := o.ProcRoot
	if root == "" {
		root = procfs.DefaultMountPoint
	}
	pfs, err := procfs.NewFS(root)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrHostUnavailable, err)
	}
	s := &hostSource{fs: pfs, clock: clock}
	note := s.follow(o)
	if o.PID > 0 && s.root.Key.PID == 0 {
		return nil, "", fmt.Errorf("%d: %w", o.PID, ErrNoServerProcess)
	}
	s.baseline()
	return s, note, nil
}

// follow picks the server process to follow, and says what it picked.
func (s *hostSource) follow(o HostOptions) string {
	switch {
	case o.InProcess:
		return inProcessNote
	case o.PID > 0:
		p, err := s.fs.Proc(o.PID)
		if err == nil {
			s.root, err = readProc(p)
		}
		if err != nil {
			return "no such process"
		}
		return fmt.Sprintf("server process %d (%s) and its children", o.PID, s.root.Comm)
	case o.Port > 0:
		p, err := listenerPID(s.fs, o.Port)
		if err != nil {
			return "server process not followed: " + err.Error()
		}
		if p.Key.PID == os.Getpid() {
			return inProcessNote
		}
		s.root, s.port = p, o.Port
		return fmt.Sprintf("server process %d (%s), found listening on port %d, and its children", p.Key.PID, p.Comm, o.Port)
	}
	return "no server process followed: the target is not on this machine's loopback (--server-pid names one)"
}

// baseline takes the first CPU counters, so that the first reading
// already has an interval to measure CPU use over.
func (s *hostSource) baseline() {
	s.prevWall = s.clock()
	if st, err := s.fs.Stat(); err == nil {
		s.prevCPU = &st.CPUTotal
	}
	if s.root.Key.PID == 0 {
		return
	}
	all, err := readAllProcs(s.fs)
	if err != nil {
		return
	}
	tree := procTree(all, s.root.Key)
	s.prev, s.lastN = procsByKey(tree), len(tree)
	s.lastRSS = compareTree(nil, tree).RSS
}

func (s *hostSource) Name() string { return "host (procfs)" }

// Read takes one reading: the machine, then the server tree, with an
// event for each process that left or joined it.
func (s *hostSource) Read(ctx context.Context, now int64) ([]Sample, error) {
	h := &Host{}
	if err := s.machine(h); err != nil {
		return nil, err
	}
	wall := s.clock()
	events, err := s.server(h, wall.Sub(s.prevWall).Seconds())
	if err != nil {
		return nil, err
	}
	s.prevWall = wall
	out := make([]Sample, 0, len(events)+1)
	for _, e := range events {
		out = append(out, Sample{TNS: now, Source: KindEvent, Instance: InstanceProcfs, Event: e})
	}
	return append(out, Sample{TNS: now, Source: KindHost, Instance: InstanceProcfs, Host: h}), nil
}

// machine reads memory (/proc/meminfo) and the share of all cores busy
// since the previous reading (/proc/stat).
func (s *hostSource) machine(h *Host) error {
	mem, err := s.fs.Meminfo()
	if err != nil {
		return fmt.Errorf("reading memory: %w", err)
	}
	if mem.MemTotalBytes != nil && mem.MemAvailableBytes != nil {
		total, avail := float64(*mem.MemTotalBytes), float64(*mem.MemAvailableBytes)
		// Used is what new work cannot have: total less available, which
		// counts reclaimable page cache as free, as the kernel estimates it.
		used := total - avail
		h.RAMTotalBytes, h.RAMAvailBytes, h.RAMUsedBytes = &total, &avail, &used
	}
	st, err := s.fs.Stat()
	if err != nil {
		return fmt.Errorf("reading CPU times: %w", err)
	}
	if s.prevCPU != nil {
		h.CPUPercent, h.StealPercent = cpuShares(*s.prevCPU, st.CPUTotal)
	}
	s.prevCPU = &st.CPUTotal
	return nil
}

// cpuShares are the shares (%) of all cores' time between two readings
// not spent idle or waiting for I/O (busy), and within it the time the
// hypervisor ran other guests on them (steal); both absent when no time
// passed.
func cpuShares(a, b procfs.CPUStat) (busy, steal *float64) {
	total := cpuTotal(b) - cpuTotal(a)
	if total <= 0 {
		return nil, nil
	}
	idle := (b.Idle + b.Iowait) - (a.Idle + a.Iowait)
	bv := 100 * max(total-idle, 0) / total
	sv := 100 * max(b.Steal-a.Steal, 0) / total
	return &bv, &sv
}

// cpuTotal is all of a CPU line's time; guest time is already in user.
func cpuTotal(c procfs.CPUStat) float64 {
	return c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
}

// server reads the followed tree into h over the dt seconds since the
// previous reading, and returns what changed in it.
func (s *hostSource) server(h *Host, dt float64) ([]*Event, error) {
	if s.root.Key.PID == 0 {
		if s.port == 0 {
			return nil, nil
		}
		return s.refind(), nil
	}
	all, err := readAllProcs(s.fs)
	if err != nil {
		return nil, err
	}
	tree := procTree(all, s.root.Key)
	if tree == nil {
		return []*Event{s.exited()}, nil
	}
	// The first reading of a tree (found again after an exit) is only a
	// baseline for CPU and for what joins or leaves it.
	fresh := s.prev == nil
	r := compareTree(s.prev, tree)
	h.ServerPID, h.ServerProcesses = s.root.Key.PID, len(tree)
	h.ServerRSSBytes = &r.RSS
	if dt > 0 && !fresh {
		cpu := 100 * r.CPU / dt
		h.ServerCPUPercent = &cpu
	}
	s.prev, s.lastRSS, s.lastN = procsByKey(tree), r.RSS, len(tree)
	if fresh {
		return nil, nil
	}
	return treeChanges(r), nil
}

// exited is the server_exit event, with what was last known of the tree;
// from then on the server is looked for again on its port, if it was
// found there.
func (s *hostSource) exited() *Event {
	e := &Event{Kind: EventServerExit, Source: InstanceProcfs, Detail: fmt.Sprintf(
		"server process %d (%s) went away; last reading: %s resident in %d processes",
		s.root.Key.PID, s.root.Comm, mibText(s.lastRSS), s.lastN)}
	s.root, s.prev = procInfo{}, nil
	return e
}

// refind looks for a server listening on the port again, and follows it
// from its next reading when one is there.
func (s *hostSource) refind() []*Event {
	p, err := listenerPID(s.fs, s.port)
	if err != nil || p.Key.PID == os.Getpid() {
		return nil
	}
	s.root, s.prev = p, nil
	return []*Event{{Kind: EventServerProcess, Source: InstanceProcfs,
		Detail: fmt.Sprintf("server process %d (%s) now listens on port %d; followed from here", p.Key.PID, p.Comm, s.port)}}
}

// treeChanges are the processes that joined or left the server's tree.
func treeChanges(r treeReading) []*Event {
	var out []*Event
	for _, p := range r.Exited {
		out = append(out, &Event{Kind: EventServerProcess, Source: InstanceProcfs,
			Detail: fmt.Sprintf("process %d (%s) left the server's tree; it had %s resident", p.Key.PID, p.Comm, mibText(p.RSS))})
	}
	for _, p := range r.Started {
		out = append(out, &Event{Kind: EventServerProcess, Source: InstanceProcfs,
			Detail: fmt.Sprintf("process %d (%s) joined the server's tree, child of %d", p.Key.PID, p.Comm, p.PPID)})
	}
	return out
}
