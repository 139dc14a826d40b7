package telemetry

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"

	"github.com/prometheus/procfs"
)

// tcpListen is the kernel's TCP_LISTEN state in /proc/net/tcp's st column.
const tcpListen = 0x0A

// errZombie: the process has exited and waits for its parent to reap it.
var errZombie = errors.New("the process has exited")

// readProc reads one process; an error when it is gone, or dead and not
// yet reaped (a crashed server whose parent has not waited for it).
func readProc(p procfs.Proc) (procInfo, error) {
	st, err := p.Stat()
	if err != nil {
		return procInfo{}, err
	}
	if st.State == "Z" {
		return procInfo{}, errZombie
	}
	return procInfo{
		Key:  procKey{PID: st.PID, Start: st.Starttime},
		PPID: st.PPID,
		Comm: st.Comm,
		CPU:  st.CPUTime(),
		RSS:  float64(st.ResidentMemory()),
	}, nil
}

// readAllProcs reads every process; one that exits while being read is
// left out, as it would be a moment later.
func readAllProcs(pfs procfs.FS) ([]procInfo, error) {
	procs, err := pfs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	out := make([]procInfo, 0, len(procs))
	for _, p := range procs {
		if info, err := readProc(p); err == nil {
			out = append(out, info)
		}
	}
	return out, nil
}

// listenInodes returns the socket inodes listening on port for loopback
// clients: bound to a loopback address or to every address, IPv4 or 6.
func listenInodes(pfs procfs.FS, port int) (map[string]bool, error) {
	inodes := map[string]bool{}
	// procfs prefers a netlink socket-diagnostics query to these files for
	// speed; the files are read once per run (and after a server exits),
	// which costs milliseconds even with thousands of sockets, and need no
	// further dependency.
	//lint:ignore SA1019 see above
	for _, read := range []func() (procfs.NetTCP, error){pfs.NetTCP, pfs.NetTCP6} {
		lines, err := read()
		if errors.Is(err, fs.ErrNotExist) {
			continue // a kernel without IPv6
		}
		if err != nil {
			return nil, fmt.Errorf("reading TCP sockets: %w", err)
		}
		for _, l := range lines {
			if l.St == tcpListen && l.LocalPort == uint64(port) && servesLoopback(l.LocalAddr) {
				inodes["socket:["+strconv.FormatUint(l.Inode, 10)+"]"] = true
			}
		}
	}
	return inodes, nil
}

func servesLoopback(ip net.IP) bool { return ip.IsLoopback() || ip.IsUnspecified() }

// listenerPID finds the process that listens on a loopback port: the one
// holding the socket whose parent does not hold it too (a server that
// forks workers shares its socket with them; the top one covers all, as
// descendants are summed).
func listenerPID(pfs procfs.FS, port int) (procInfo, error) {
	inodes, err := listenInodes(pfs, port)
	if err != nil {
		return procInfo{}, err
	}
	if len(inodes) == 0 {
		return procInfo{}, fmt.Errorf("nothing listens on port %d here (a server in another network namespace, a container, or on another host: give --server-pid, or --host-metrics-url for a node exporter)", port)
	}
	procs, err := pfs.AllProcs()
	if err != nil {
		return procInfo{}, fmt.Errorf("listing processes: %w", err)
	}
	holders := map[int]procInfo{}
	for _, p := range procs {
		targets, err := p.FileDescriptorTargets()
		if err != nil || !holdsAny(targets, inodes) {
			continue // another user's process: its descriptors are not ours to read
		}
		if info, err := readProc(p); err == nil {
			holders[info.Key.PID] = info
		}
	}
	return topHolder(holders, port)
}

func holdsAny(targets []string, inodes map[string]bool) bool {
	for _, t := range targets {
		if inodes[t] {
			return true
		}
	}
	return false
}

// topHolder picks, among the processes holding the socket, the lowest pid
// whose parent is not a holder.
func topHolder(holders map[int]procInfo, port int) (procInfo, error) {
	var best procInfo
	for pid, p := range holders {
		if _, child := holders[p.PPID]; child {
			continue
		}
		if best.Key.PID == 0 || pid < best.Key.PID {
			best = p
		}
	}
	if best.Key.PID == 0 {
		return procInfo{}, fmt.Errorf("port %d listens, but no process of user %d holds its socket (a server run by another user: give --server-pid)", port, os.Getuid())
	}
	return best, nil
}
