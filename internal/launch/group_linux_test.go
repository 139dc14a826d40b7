package launch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() { platformHelpers["reaper"] = reaperHelper }

// reaperHelper is servebench as a container's entry point: a subreaper
// (as init is), so that the workers its server leaves come back to it as
// zombies nobody else reaps. It starts a server with a worker, stops it
// and says how the stop went.
func reaperHelper() {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Println("no subreaper:", err)
		os.Exit(2)
	}
	p, err := Start(Spec{Args: []string{os.Args[0]}, Env: []string{helperEnv + "=child"}})
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	time.Sleep(300 * time.Millisecond) // let the worker start
	st, err := p.Stop(context.Background(), time.Second)
	fmt.Printf("stopped killed=%v err=%v zombies=%d\n", st.Killed, err, zombiesOf(p.PID()))
}

// zombiesOf counts the zombies of group pgid.
func zombiesOf(pgid int) int {
	n := 0
	eachInGroup(pgid, func(int, procInfo) { n++ }, func(p procInfo) bool { return p.state == "Z" })
	return n
}

// TestStopAsInit: a server's worker that dies after it comes back to a
// servebench that is init (or a subreaper) as a zombie. It holds nothing:
// Stop neither waits its grace out on it, nor kills, nor reports the group
// left; and it reaps it, so that a sweep's entry point does not gather
// zombies configuration after configuration.
func TestStopAsInit(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=reaper")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if !strings.Contains(string(out), "stopped killed=false err=<nil> zombies=0") {
		t.Errorf("stop as init:\n%s", out)
	}
}
