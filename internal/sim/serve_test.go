package sim

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSetsTimeScale(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{"time_scale: 10\n", true},           // set
		{"time_scale: 1\nseed: 2\n", true},   // set to real time is set too
		{"seed: 2\n", false},                 // left to the loader
		{"engine: {time_scale: 3}\n", false}, // only the top level's counts
		{"time_scale: [\n", false},           // not YAML: the loader says why
	} {
		if got := SetsTimeScale([]byte(c.data)); got != c.want {
			t.Errorf("SetsTimeScale(%q) = %v, want %v", c.data, got, c.want)
		}
	}
}

// The banner says whether the simulator runs in real time, and when it
// does not, the header that tells servebench its scale.
func TestWriteBanner(t *testing.T) {
	var real, fast strings.Builder
	cfg := ServeDefaultConfig()
	WriteBanner(&real, cfg, "http://127.0.0.1:8000")
	cfg.TimeScale = 10
	WriteBanner(&fast, cfg, "http://127.0.0.1:8000")
	if !strings.Contains(real.String(), "  real time (batch-1 decode") || strings.Contains(real.String(), TimeScaleHeader) {
		t.Errorf("real time banner:\n%s", real.String())
	}
	if !strings.Contains(fast.String(), "time scale 10: a client measures model time / 10") || !strings.Contains(fast.String(), TimeScaleHeader+": 10") {
		t.Errorf("time scale 10 banner:\n%s", fast.String())
	}
}

// A config file is laid over the served defaults, and says whether it
// set the time scale; one that cannot be read is the read's error.
func TestServeConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, file string
		slots      int
		scaleSet   bool
	}{
		{"no file", "", ServeDefaultConfig().Engine.MaxNumSeqs, false},
		{"slots", write("slots.yaml", "engine: {max_num_seqs: 3}\n"), 3, false},
		{"scale", write("scale.yaml", "time_scale: 5\n"), ServeDefaultConfig().Engine.MaxNumSeqs, true},
	}
	for _, tt := range tests {
		cfg, scaleSet, err := ServeConfigFile(tt.file)
		if err != nil || cfg.Engine.MaxNumSeqs != tt.slots || scaleSet != tt.scaleSet {
			t.Errorf("%s: %d slots, scale set %v, %v; want %d, %v", tt.name, cfg.Engine.MaxNumSeqs, scaleSet, err, tt.slots, tt.scaleSet)
		}
	}
	if _, _, err := ServeConfigFile(filepath.Join(dir, "none.yaml")); !errors.As(err, new(*fs.PathError)) {
		t.Errorf("a missing file: %v, want a PathError", err)
	}
	if _, _, err := ServeConfigFile(write("bad.yaml", "engine: {max_num_seqs: many}\n")); err == nil || errors.As(err, new(*fs.PathError)) {
		t.Errorf("a file that does not parse: %v", err)
	}
}

// Serve says where it serves, answers until its context ends, and an
// address it cannot listen on is a ListenError naming it.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var banner strings.Builder
	done := make(chan error, 1)
	addr := "127.0.0.1:0"
	go func() { done <- Serve(ctx, ServeDefaultConfig(), addr, &banner) }()
	select {
	case err := <-done:
		t.Fatalf("Serve returned before its context ended: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	if !strings.Contains(banner.String(), "servebench sim: serving") {
		t.Errorf("banner %q", banner.String())
	}
	err := Serve(t.Context(), ServeDefaultConfig(), "127.0.0.1:99999", io.Discard)
	if l, ok := errors.AsType[*ListenError](err); !ok || l.Addr != "127.0.0.1:99999" || !strings.HasPrefix(err.Error(), "listening on 127.0.0.1:99999: ") {
		t.Errorf("a bad address: %v", err)
	}
}

// TestLoadConfig: a file's settings over the defaults; a file that cannot
// be read is an *fs.PathError, one that does not parse is not.
func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("engine:\n  max_num_seqs: 7\n"), 0o600)
	os.WriteFile(bad, []byte("engine:\n  max_num_seqs: many\n"), 0o600)
	cfg, err := LoadConfig(good)
	if err != nil || cfg.Engine.MaxNumSeqs != 7 || cfg.TimeScale != DefaultConfig().TimeScale {
		t.Errorf("good: %d slots, time scale %v, %v; want 7, the default", cfg.Engine.MaxNumSeqs, cfg.TimeScale, err)
	}
	if _, err := LoadConfig(bad); err == nil || errors.As(err, new(*fs.PathError)) {
		t.Errorf("bad: %v, want a parse error", err)
	}
	if _, err := LoadConfig(filepath.Join(dir, "none.yaml")); !errors.As(err, new(*fs.PathError)) {
		t.Errorf("missing: %v, want an *fs.PathError", err)
	}
}
