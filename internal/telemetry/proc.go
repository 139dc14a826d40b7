package telemetry

import (
	"fmt"
	"slices"
)

// procKey names a process across readings: a pid the kernel reuses for
// a new process has another start time, so it is another process.
type procKey struct {
	PID   int
	Start uint64 // clock ticks after boot
}

// procInfo is one process as one reading saw it.
type procInfo struct {
	Key  procKey
	PPID int
	Comm string
	CPU  float64 // user+system seconds since it started (its own, not its reaped children's)
	RSS  float64 // resident bytes
}

// procTree returns root and every process below it, root first, from a
// reading of all processes; nil when root is not among them (it exited,
// or its pid now belongs to another process).
func procTree(all []procInfo, root procKey) []procInfo {
	children := map[int][]procInfo{}
	var tree []procInfo
	for _, p := range all {
		if p.Key == root {
			tree = append(tree, p)
		}
		children[p.PPID] = append(children[p.PPID], p)
	}
	if tree == nil {
		return nil
	}
	for i := 0; i < len(tree); i++ {
		for _, c := range children[tree[i].Key.PID] {
			// A process that is its own parent (pid 0 in a fake tree, or a
			// bad reading) must not loop.
			if c.Key != tree[i].Key {
				tree = append(tree, c)
			}
		}
	}
	return tree
}

// treeReading is what one reading of the server's process tree adds up to.
type treeReading struct {
	RSS float64 // sum of resident bytes (pages two processes share count twice)
	// CPU is the CPU seconds the tree used since the previous reading:
	// each live process's delta, and all of a process new since then.
	// A process that exited in between loses its time since the last
	// reading; its reaped time is not taken from its parent's child
	// counters, which would count again what earlier readings counted.
	CPU float64
	// Started and Exited are the processes that appeared in and left the
	// tree since the previous reading.
	Started, Exited []procInfo
}

// compareTree reads tree against the previous reading prev (by key).
func compareTree(prev map[procKey]procInfo, tree []procInfo) treeReading {
	var r treeReading
	seen := make(map[procKey]bool, len(tree))
	for _, p := range tree {
		seen[p.Key] = true
		r.RSS += p.RSS
		old, ok := prev[p.Key]
		if !ok {
			r.CPU += p.CPU
			r.Started = append(r.Started, p)
			continue
		}
		r.CPU += max(p.CPU-old.CPU, 0)
	}
	for k, p := range prev {
		if !seen[k] {
			r.Exited = append(r.Exited, p)
		}
	}
	slices.SortFunc(r.Exited, func(a, b procInfo) int { return a.Key.PID - b.Key.PID })
	return r
}

// procsByKey indexes a tree for the next compare.
func procsByKey(tree []procInfo) map[procKey]procInfo {
	m := make(map[procKey]procInfo, len(tree))
	for _, p := range tree {
		m[p.Key] = p
	}
	return m
}

// mibText formats bytes for an event's one-line detail.
func mibText(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
