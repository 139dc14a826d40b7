package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Fault-matrix cases where a fault used to lose records or invent them:
// Ctrl-C against the built-in simulator, a full disk, a stalled closed
// loop, duplicated and damaged files, a killed run's telemetry and a
// read-only history. Each checks what is on disk against what is printed
// and stored.

// Ctrl-C with the built-in simulator: the simulator outlives the client's
// grace, so the requests in flight finish (one signal) or are recorded
// cancelled (two), never as the server's errors.
func TestFaultInterruptBuiltinSimulator(t *testing.T) {
	tests := []struct {
		name    string
		signals int
		want    string // the class the requests in flight end with ("" ok)
	}{
		{"once: in flight finish", 1, ""},
		{"twice: in flight cancelled", 2, "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r")
			cmd := exec.Command(binary, "run", "--concurrency", "8", "--requests", "400", "--out", dir)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			waitRecords(t, filepath.Join(dir, "records.jsonl"), 16)
			for range tt.signals {
				cmd.Process.Signal(syscall.SIGINT)
				time.Sleep(50 * time.Millisecond)
			}
			if code := cliExitCode(t, cmd); code != 130 {
				t.Fatalf("exit %d, want 130\n%s", code, &out)
			}
			classes := loadRecords(t, dir)
			if classes["server_error"] != 0 || sum(classes) >= 400 {
				t.Errorf("records by class %v: want no server error, the run stopped early\n%s", classes, &out)
			}
			if tt.want != "" && classes[tt.want] == 0 {
				t.Errorf("records by class %v: want the requests in flight %s", classes, tt.want)
			}
			if tt.want == "" && classes[""] != sum(classes) {
				t.Errorf("records by class %v: want every request in flight finished", classes)
			}
			if !strings.Contains(out.String(), fmt.Sprintf("%d records written to %s", sum(classes), dir)) {
				t.Errorf("output does not count the %d records on disk:\n%s", sum(classes), &out)
			}
		})
	}
}

// A stalled closed loop: the server accepts every request and never
// answers. With the default 10-minute timeout, --duration 3s --grace 2s
// still ends at about duration plus grace, as an open loop does, with each
// request recorded as a timeout and the files written.
func TestFaultStalledClosedLoopEnds(t *testing.T) {
	url, got := stalledServer(t)
	dir := filepath.Join(t.TempDir(), "r")
	cmd := exec.Command(binary, loadArgs(t, url, dir, "--concurrency", "2", "--duration", "3s", "--grace", "2s", "--json")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	ended := make(chan int, 1)
	go func() { ended <- cliExitCode(t, cmd) }()
	var code int
	select {
	case code = <-ended:
	case <-time.After(60 * time.Second):
		t.Fatalf("a stalled closed loop with --duration 3s --grace 2s still runs after 60s")
	}
	// At least the duration and the grace; the upper bound is loose, for
	// a loaded machine: the fault was a wait of the 10-minute timeout.
	if el := time.Since(start); el < 5*time.Second || el > 30*time.Second {
		t.Errorf("ran %v, want about 5 s (duration + grace)", el)
	}
	classes := loadRecords(t, dir)
	sent, _ := loadSent(t, dir)
	if classes["timeout_first"] != 2 || sum(classes) != 2 || sent != 2 || got.Load() != 2 {
		t.Errorf("records by class %v, sent %d, server saw %d: want 2 first-token timeouts, one per request sent", classes, sent, got.Load())
	}
	if code != 1 || !strings.Contains(stderr.String(), "every request failed") || !strings.Contains(stdout.String(), `"schema": "servebench.summary/v1"`) {
		t.Errorf("exit %d, stdout %q, stderr %q: want the summary printed, then exit 1 as every request failed", code, &stdout, &stderr)
	}
}

// faultSmallDisk mounts a tmpfs of size bytes for one test and unmounts it
// when the test ends; it skips where that cannot be done (not Linux, not
// root, no mount).
func faultSmallDisk(t *testing.T, size int) string {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("a full disk is made with a small tmpfs: needs Linux and root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs to fill: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// faultStored reads what the history stored of run id: the requests of its
// points (completed, failed) and whether it was interrupted.
func faultStored(t *testing.T, stdout string) (requests int) {
	t.Helper()
	_, after, ok := strings.Cut(stdout, "stored in history as run ")
	id, _, _ := strings.Cut(after, "\n")
	if !ok {
		t.Fatalf("the run was not stored in history:\n%s", stdout)
	}
	code, out, stderr := run(t, "history", "show", id, "--json")
	if code != 0 {
		t.Fatalf("history show %s: exit %d: %s", id, code, stderr)
	}
	var e struct {
		Points []struct{ Completed, Failed int }
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("history show --json: %v\n%s", err, out)
	}
	for _, p := range e.Points {
		requests += p.Completed + p.Failed
	}
	return requests
}

// A disk that fills during a run: the first record that cannot be written
// stops the load at once; the error names records.jsonl and the cause; the
// count printed and stored is the count on disk, with no torn line; and
// report later says why the run ended. A disk full from the start leaves
// nothing that blocks a rerun.
func TestFaultDiskFull(t *testing.T) {
	mnt := faultSmallDisk(t, 320<<10)
	dir := filepath.Join(mnt, "r")
	code, stdout, stderr := run(t, "run", "--concurrency", "4", "--requests", "1500", "--warmup", "0", "--out", dir)
	out := stdout + stderr
	if code != 1 || !strings.Contains(stderr, "records.jsonl") || !strings.Contains(stderr, "no space left on device") {
		t.Errorf("exit %d; want 1 and an error naming records.jsonl and the cause:\n%s", code, out)
	}
	classes := loadRecords(t, dir) // fails on a torn line
	onDisk := sum(classes)
	if onDisk == 0 || onDisk >= 1500 {
		t.Fatalf("%d records on disk: want the disk to fill mid-run", onDisk)
	}
	if !strings.Contains(out, fmt.Sprintf("%d records written to %s", onDisk, dir)) {
		t.Errorf("output does not say the %d records on disk were written:\n%s", onDisk, out)
	}
	// At once: no more sent than were on disk and in flight (4 users),
	// and those the users had under way when the write failed.
	if sent, _ := loadSent(t, dir); sent > onDisk+2*4 {
		t.Errorf("run.json says %d sent for %d records on disk: the load went on after the disk filled", sent, onDisk)
	}
	if stored := faultStored(t, out); stored != onDisk {
		t.Errorf("history stored %d requests for %d records on disk", stored, onDisk)
	}
	code, _, rstderr := run(t, "report", "--json", dir)
	rout := rstderr
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, rstderr)
	}
	_, rjson, _ := run(t, "report", "--json", dir)
	rout += rjson
	if !strings.Contains(rout, "no space left on device") || strings.Contains(rout, "was interrupted") {
		t.Errorf("report does not say the disk filled, or blames an interrupt:\n%s", rout)
	}

	// Full from the start: the error says so, and nothing is left that
	// blocks the same command once there is room.
	filler := filepath.Join(mnt, "filler")
	exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=4096").Run()
	again := filepath.Join(mnt, "again")
	code, _, stderr = run(t, "run", "--concurrency", "2", "--requests", "4", "--output-tokens", "4", "--out", again)
	if code != 1 || !strings.Contains(stderr, "no space left on device") {
		t.Errorf("a full disk at the start: exit %d, stderr %q; want 1 and the cause", code, stderr)
	}
	entries, _ := os.ReadDir(again)
	for _, e := range entries {
		t.Errorf("a run that could not start left %s behind", e.Name())
	}
	os.Remove(filler)
	os.RemoveAll(dir)
	if code, _, stderr := run(t, "run", "--concurrency", "2", "--requests", "4", "--output-tokens", "4", "--out", again); code != 0 {
		t.Errorf("the rerun with room: exit %d: %s", code, stderr)
	}
}

// faultRun makes a small finished run of the built-in simulator in a new
// directory.
func faultRun(t *testing.T, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "r")
	args := append([]string{"run", "--concurrency", "2", "--requests", "16", "--output-tokens", "16", "--warmup", "0", "--out", dir}, extra...)
	if code, _, stderr := run(t, args...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	return dir
}

// faultPoints is report --json's points without their warnings, to
// compare two reports' figures.
func faultPoints(t *testing.T, stdout string) string {
	t.Helper()
	var s struct {
		Points []map[string]any `json:"points"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("report --json: %v\n%s", err, stdout)
	}
	for _, p := range s.Points {
		delete(p, "warnings")
		delete(p, "client") // run.json's, which a rebuilt run lacks
	}
	b, _ := json.Marshal(s.Points)
	return string(b)
}

// Duplicated records are counted once: a record is unique by its id, and
// the repeated lines are dropped with a warning naming them.
func TestFaultDuplicateRecords(t *testing.T) {
	dir := faultRun(t)
	_, want, _ := run(t, "report", "--json", dir)
	path := filepath.Join(dir, "records.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	// lines 17, 18 and 19 repeat lines 2, 5 and 9
	b = append(b, lines[1]+lines[4]+lines[8]...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, got, stderr := run(t, "report", "--json", dir)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if faultPoints(t, got) != faultPoints(t, want) {
		t.Errorf("with 3 records repeated the figures changed:\n%s\nwant\n%s", faultPoints(t, got), faultPoints(t, want))
	}
	if !strings.Contains(stderr, "dropped 3 duplicated record(s)") || !strings.Contains(stderr, "line 17 (id ") || !strings.Contains(stderr, "line 19 (id ") {
		t.Errorf("stderr does not name the 3 duplicated lines: %q", stderr)
	}
}

// A damaged run.json: report and compare rebuild the run from its records,
// with a warning naming the file, instead of refusing the directory.
func TestFaultDamagedRunJSON(t *testing.T) {
	dir := faultRun(t, "--api", "openai-completions")
	_, want, _ := run(t, "report", "--json", dir)
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"schema":"servebench.run/v1","tar`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, got, stderr := run(t, "report", "--json", dir)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, filepath.Join(dir, "run.json")+" is damaged") || !strings.Contains(stderr, "taken from summary.json") {
		t.Errorf("stderr does not say run.json is damaged and taken from summary.json: %q", stderr)
	}
	if faultPoints(t, got) != faultPoints(t, want) {
		t.Errorf("the rebuilt run's figures differ:\n%s\nwant\n%s", faultPoints(t, got), faultPoints(t, want))
	}
	// A killed run has no summary.json: the run comes from the records.
	os.Remove(filepath.Join(dir, "summary.json"))
	code, got, stderr = run(t, "report", "--json", dir)
	if code != 0 || !strings.Contains(stderr, "rebuilt from its records") {
		t.Fatalf("report without summary.json: exit %d, stderr %q; want the run rebuilt from its records", code, stderr)
	}
	var r struct {
		Run    *struct{ Target struct{ API, Model string } }
		Points []struct{ Requests struct{ Completed int } }
	}
	if json.Unmarshal([]byte(got), &r); r.Run == nil || r.Run.Target.API != "openai-completions" || r.Run.Target.Model != "sim-llama-3.1-8b" ||
		len(r.Points) != 1 || r.Points[0].Requests.Completed != 16 {
		t.Errorf("rebuilt run %+v, points %+v: want the target's API and model from the records, 16 completed", r.Run, r.Points)
	}
	other := faultRun(t, "--api", "openai-completions")
	if code, _, stderr := run(t, "compare", other, dir); code != 0 || !strings.Contains(stderr, "is damaged") {
		t.Errorf("compare with a damaged run.json: exit %d, stderr %q; want it compared, with the warning", code, stderr)
	}
}

// After SIGKILL, report keeps the telemetry of the point that was killed:
// run.json has no entry for it, and its window comes from its records.
func TestFaultKilledPointTelemetry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	cmd := exec.Command(binary, "run", "--concurrency", "4", "--requests", "100000", "--out", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitRecords(t, filepath.Join(dir, "records.jsonl"), 30)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	code, stdout, stderr := run(t, "report", "--json", dir)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var s struct {
		Points []struct {
			Telemetry *struct {
				Server map[string]any `json:"server"`
			} `json:"telemetry"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || len(s.Points) != 1 {
		t.Fatalf("report --json: %v\n%s", err, stdout)
	}
	if s.Points[0].Telemetry == nil || len(s.Points[0].Telemetry.Server) == 0 {
		t.Errorf("the killed point has no telemetry, though telemetry.jsonl holds its samples:\n%s", stdout)
	}
}

// A read-only history can be listed and shown: reading needs no write
// access (here a read-only mount, as root ignores file permissions). And
// history import into a damaged database blames the database, not the run
// directory.
func TestFaultHistoryReadOnlyAndDamaged(t *testing.T) {
	mnt := faultSmallDisk(t, 4<<20)
	db := filepath.Join(mnt, "history.db")
	dir := faultRun(t)
	if code, _, stderr := run(t, "history", "import", "--db", db, dir); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot remount the tmpfs read-only: %v: %s", err, out)
	}
	code, stdout, stderr := run(t, "history", "--db", db)
	if code != 0 || !strings.Contains(stdout, dir) {
		t.Errorf("history of a read-only database: exit %d, stdout %q, stderr %q; want the run listed", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "history", "show", "1", "--db", db); code != 0 || !strings.Contains(stdout, "run 1") {
		t.Errorf("history show of a read-only database: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	// Damaged past its first pages: it opens, and storing a run fails.
	damaged := filepath.Join(t.TempDir(), "history.db")
	if code, _, stderr := run(t, "history", "import", "--db", damaged, dir); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(damaged)
	if err != nil || len(b) <= 8192 {
		t.Fatalf("history database of %d bytes: %v", len(b), err)
	}
	for i := 8192; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	os.WriteFile(damaged, b, 0o644)
	other := faultRun(t)
	code, _, stderr = run(t, "history", "import", "--db", damaged, other)
	if code != 1 || !strings.Contains(stderr, "Error: history database "+damaged) || strings.Contains(stderr, other+":") ||
		strings.Contains(stderr, "a run directory holds") {
		t.Errorf("import into a damaged database: exit %d, stderr %q; want 1 and the database blamed, not the run directory", code, stderr)
	}
}
