package telemetry

import (
	"os"
	"strings"
	"testing"

	"github.com/prometheus/procfs"
)

// fakeProcFS is testdata/proc: a machine whose Ollama (pid 100) listens on
// 127.0.0.1:11435 with a runner child 101 (which has a child 102, and a
// zombie sibling 999); a prefork nginx (400) listens on 0.0.0.0:8080
// (its worker 399, a pid reused after a wrap, shares it); llama-server (70)
// listens on [::1]:9000; pid 50 holds an established
// connection on port 11435; pid 60 listens on 10.0.0.5:9001 only.
func fakeProcFS(t *testing.T) procfs.FS {
	t.Helper()
	fs, err := procfs.NewFS("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestListenerPID(t *testing.T) {
	fs := fakeProcFS(t)
	for _, tc := range []struct {
		name    string
		port    int
		pid     int
		comm    string
		errPart string
	}{
		// The listening socket, not pid 50's established one on the same port.
		{"loopback IPv4", 11435, 100, "ollama", ""},
		// Parent and worker hold the socket: the parent covers both.
		{"prefork, every address", 8080, 400, "nginx", ""},
		{"loopback IPv6", 9000, 70, "llama-server", ""},
		// Bound to another address only: a loopback target cannot reach it.
		{"not on loopback", 9001, 0, "", "nothing listens on port 9001"},
		{"nothing", 1234, 0, "", "nothing listens on port 1234"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := listenerPID(fs, tc.port)
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) {
					t.Fatalf("got %+v, %v; want an error saying %q", got, err, tc.errPart)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Key.PID != tc.pid || got.Comm != tc.comm {
				t.Errorf("got pid %d (%s), want %d (%s)", got.Key.PID, got.Comm, tc.pid, tc.comm)
			}
		})
	}
}

// TestReadAllProcs: the stat fields land in their places, and the zombie
// is left out.
func TestReadAllProcs(t *testing.T) {
	all, err := readAllProcs(fakeProcFS(t))
	if err != nil {
		t.Fatal(err)
	}
	byPID := map[int]procInfo{}
	for _, p := range all {
		byPID[p.Key.PID] = p
	}
	if _, ok := byPID[999]; ok {
		t.Error("the zombie 999 was read as a live process")
	}
	got := byPID[101]
	page := float64(os.Getpagesize())
	want := procInfo{Key: procKey{PID: 101, Start: 6000}, PPID: 100, Comm: "ollama", CPU: 15, RSS: 25600 * page}
	if got != want {
		t.Errorf("pid 101: got %+v\nwant %+v", got, want)
	}
	tree := procTree(all, byPID[100].Key)
	var pids []int
	for _, p := range tree {
		pids = append(pids, p.Key.PID)
	}
	if len(pids) != 3 || pids[0] != 100 || pids[1] != 101 || pids[2] != 102 {
		t.Errorf("tree of 100: %v, want [100 101 102]", pids)
	}
}
