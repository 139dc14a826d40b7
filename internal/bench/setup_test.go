package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/telemetry"
)

// TestAheadPreparesCountedPointsWhole: a point bounded by a request count
// whose prompts are sized by the server is prepared whole before it starts
// (within the token budget); others keep two rounds or two seconds ready.
func TestAheadPreparesCountedPointsWhole(t *testing.T) {
	tests := []struct {
		name     string
		mean     float64
		p        load.Point
		byServer bool
		expect   int
	}{
		{"count-bounded, server-sized: all of it", 512, load.Point{Load: record.Load{Concurrency: 4}, Requests: 100, WarmupRequests: 5}, true, 105},
		{"count-bounded, sized locally: two rounds", 512, load.Point{Load: record.Load{Concurrency: 30}, Requests: 100, WarmupRequests: 5}, false, 60},
		{"long prompts: within the token budget", 1 << 20, load.Point{Load: record.Load{Concurrency: 4}, Requests: 100}, true, 16},
		{"duration-bound closed loop: two rounds", 512, load.Point{Load: record.Load{Concurrency: 50}, Duration: time.Minute}, true, 100},
		{"duration-bound open loop: two seconds", 512, load.Point{Load: record.Load{Rate: 30}, Duration: time.Minute}, true, 60},
		{"never fewer than 16", 512, load.Point{Load: record.Load{Concurrency: 1}, Duration: time.Minute}, false, 16},
	}
	for _, tt := range tests {
		if got := aheadFor(tt.mean, tt.p, tt.byServer); got != tt.expect {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.expect)
		}
	}
}

// TestErrorsNameNoFlag: bench's errors say what is wrong in its own terms
// (a caller maps them to its flags) and can be told apart.
func TestErrorsNameNoFlag(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, rundir.RecordsFile), nil, 0o644)
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		name string
		err  func() error
		is   error
	}{
		{"run exists", func() error { _, err := Open(Config{OutDir: dir}); return err }, rundir.ErrRunExists},
		{"not a directory", func() error { _, err := Open(Config{OutDir: filepath.Join(file, "x")}); return err }, rundir.ErrRunDir},
		{"unknown tokenizer", func() error {
			_, err := NewConfig(t.Context(), Setup{Tokenizer: "words"})
			return err
		}, nil},
	}
	for _, tt := range tests {
		err := tt.err()
		if err == nil || strings.Contains(err.Error(), "--") || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	_, err := NewConfig(t.Context(), Setup{Tokenizer: "words"})
	if se, ok := errors.AsType[*SetupError](err); !ok || se.Setting != "Tokenizer" {
		t.Errorf("unknown tokenizer: %v, want a SetupError of Tokenizer", err)
	}
}

// TestSetupErrorOrder: the tokenizer and the telemetry are set up side by
// side, and the tokenizer's error comes first when both fail, as when they
// ran one after the other; the telemetry's is told when it fails alone.
func TestSetupErrorOrder(t *testing.T) {
	gone := &telemetry.Options{ServerPID: 1 << 30} // no such process
	_, err := NewConfig(t.Context(), Setup{Tokenizer: "words", Telemetry: gone})
	if se, ok := errors.AsType[*SetupError](err); !ok || se.Setting != "Tokenizer" {
		t.Errorf("both wrong: %v, want the tokenizer's SetupError", err)
	}
	target, err := backend.NewTarget(backend.TargetOptions{URL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewConfig(t.Context(), Setup{Tokenizer: "cl100k_base", API: record.APIOpenAIChat, Target: target, Model: "m", Telemetry: gone})
	if se, ok := errors.AsType[*SetupError](err); !ok || se.Setting != "ServerPID" {
		t.Errorf("the server's process wrong: %v, want the ServerPID SetupError", err)
	}
}
