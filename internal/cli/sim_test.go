package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/sim"
)

// -update-sim rewrites the sim golden files (its own name, so that it
// cannot clash with another file's -update in this package).
var updateSim = flag.Bool("update-sim", false, "rewrite the sim golden files")

func TestSimPrintConfigGolden(t *testing.T) {
	code, out, errOut := runMain(t, "sim", "--print-config")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden := filepath.Join("testdata", "sim-print-config.golden")
	if *updateSim {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestSimPrintConfigGolden -update-sim)", err)
	}
	if out != string(want) {
		t.Errorf("--print-config differs from %s:\n%s", golden, out)
	}
}

func TestSimConfigLayers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sim.yaml")
	if err := os.WriteFile(file, []byte("time_scale: 4\nengine:\n  max_num_seqs: 32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Defaults, then the file, then flags.
	code, out, errOut := runMain(t, "sim", "--config", file, "--max-num-seqs", "64", "--kv-tokens", "1000", "--print-config")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"time_scale: 4 ", "max_num_seqs: 64 ", "kv_tokens: 1000 ", "62 blocks x 16 = 992 tokens", "max_model_len         992"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"bad value by flag", []string{"--max-num-seqs", "0"}, []string{"engine.max_num_seqs", "--max-num-seqs"}},
		{"bad policy", []string{"--preemption", "swap"}, []string{"engine.preemption", "--preemption"}},
		{"bad type in file", []string{"--config", write("a.yaml", "engine:\n  max_num_seqs: lots\n")}, []string{"a.yaml", "engine.max_num_seqs", "want a whole number"}},
		{"unknown field in file", []string{"--config", write("b.yaml", "engine:\n  slots: 4\n")}, []string{"engine.slots", "unknown field"}},
		{"broken YAML", []string{"--config", write("c.yaml", "engine: [\n")}, []string{"invalid YAML"}},
		{"missing file", []string{"--config", filepath.Join(dir, "none.yaml")}, []string{"reading --config", "--print-config"}},
		{"stray argument", []string{"extra"}, []string{"unexpected argument"}},
		{"not a number", []string{"--time-scale", "fast"}, []string{"time-scale"}},
	} {
		code, _, errOut := runMain(t, append([]string{"sim", "--print-config"}, tc.args...)...)
		if code != ExitUsage {
			t.Errorf("%s: exit %d, want %d", tc.name, code, ExitUsage)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, errOut)
			}
		}
	}
}

// syncBuffer is a strings.Builder safe to write from one goroutine and read
// from another.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestSimServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errOut syncBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errOut, Getenv: func(string) string { return "" }}
	exit := make(chan int)
	go func() { exit <- env.Main(ctx, []string{"sim", "--addr", "127.0.0.1:0", "--time-scale", "100"}) }()
	urlRe := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	var url string
	for deadline := time.Now().Add(5 * time.Second); url == ""; {
		if time.Now().After(deadline) {
			t.Fatalf("no URL announced: %q", errOut.String())
		}
		url = urlRe.FindString(errOut.String())
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"a b c","max_tokens":3}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"completion_tokens":`) {
		t.Errorf("completions: %d %s", resp.StatusCode, b)
	}
	cancel()
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Errorf("exit %d after cancel", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sim did not stop on cancel")
	}
	if !strings.Contains(errOut.String(), "time scale 100") {
		t.Errorf("startup text lacks the time scale: %s", errOut.String())
	}
}

// The simulator's announcement and the client's reading are one header.
func TestTimeScaleHeaderAgrees(t *testing.T) {
	if sim.TimeScaleHeader != backend.TimeScaleHeader {
		t.Errorf("sim announces %q, the client reads %q", sim.TimeScaleHeader, backend.TimeScaleHeader)
	}
}

// TestSimPrintedConfigChangesNothing: the what-if workflow (print the
// config, edit it, run --sim-config FILE) runs as the default run does
// when nothing is edited, time scale included, and names in the header
// what an edit changed.
func TestSimPrintedConfigChangesNothing(t *testing.T) {
	dir := t.TempDir()
	code, printed, errOut := runMain(t, "sim", "--print-config")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	plain := filepath.Join(dir, "sim.yaml")
	edited := filepath.Join(dir, "fast.yaml")
	if err := os.WriteFile(plain, []byte(printed), 0o644); err != nil {
		t.Fatal(err)
	}
	fast := strings.Replace(printed, "mem_bandwidth_gbs: 3350", "mem_bandwidth_gbs: 6700", 1)
	if err := os.WriteFile(edited, []byte(fast), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) string {
		t.Helper()
		args := append([]string{"run", "--concurrency", "1", "--requests", "2", "--warmup", "0", "--output-tokens", "3",
			"--out", filepath.Join(dir, fmt.Sprint("r", len(extra)+strings.Count(strings.Join(extra, ""), "fast")))}, extra...)
		code, out, errOut := runMain(t, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		return strings.SplitN(out, "\n", 2)[0]
	}
	// got, want: the header line of each run
	def, same, changed := run(), run("--sim-config", plain), run("--sim-config", edited)
	if same != def {
		t.Errorf("the printed default config changed the run:\n got %s\nwant %s", same, def)
	}
	if !strings.Contains(def, "ran 10× faster") {
		t.Errorf("default run header %q does not state the time scale 10", def)
	}
	if want := "changed: device.mem_bandwidth_gbs 6700 (default 3350)"; !strings.Contains(changed, want) || !strings.Contains(changed, "ran 10× faster") {
		t.Errorf("edited config's header %q lacks %q or the default time scale", changed, want)
	}
}
