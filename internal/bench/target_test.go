package bench

import (
	"errors"
	"fmt"
	"testing"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sim"
)

// TestOpenTargetStartsSimulator: no URL starts the simulator on loopback,
// named as such, serving its model, with its configuration in Info.
func TestOpenTargetStartsSimulator(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.TimeScale = 20
	cfg.Engine.MaxNumSeqs = 7
	tg, err := OpenTarget(t.Context(), TargetSpec{Sim: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if !tg.Simulated || tg.Model != cfg.Model.Name || tg.API != record.APIOpenAIChat {
		t.Errorf("got simulated %v, model %q, API %q; want true, %q, %q", tg.Simulated, tg.Model, tg.API, cfg.Model.Name, record.APIOpenAIChat)
	}
	for k, want := range map[record.ServerKey]string{record.ServerEngine: "servebench-sim", record.ServerTimeScale: "20", record.ServerMaxNumSeqs: "7",
		record.ServerSimChanges: fmt.Sprintf("engine.max_num_seqs 7 (default %d)", sim.DefaultMaxNumSeqs)} {
		if got := tg.Info[k]; got != want {
			t.Errorf("Info[%s] = %q, want %q", k, got, want)
		}
	}
	if _, err := tg.Preflight(t.Context()); err != nil {
		t.Errorf("the simulator fails its preflight: %v", err)
	}
}

// TestOpenTargetURL: a URL is the user's server, its endpoint path names
// the API unless one is given, and a URL that cannot be used is the
// setting URL's error.
func TestOpenTargetURL(t *testing.T) {
	for _, tc := range []struct {
		name, url, api string
		want           string // the API, or "error"
	}{
		{"a root: the default API", "http://127.0.0.1:9", "", record.APIOpenAIChat},
		{"an endpoint path names the API", "http://127.0.0.1:9/v1/completions", "", record.APIOpenAICompletions},
		{"an API given wins over the path", "http://127.0.0.1:9/v1/completions", record.APIOllamaChat, record.APIOllamaChat},
		{"no scheme", "127.0.0.1:9", "", "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := OpenTarget(t.Context(), TargetSpec{Server: backend.TargetOptions{URL: tc.url}, API: tc.api, Model: "m"})
			if tc.want == "error" {
				se, ok := errors.AsType[*SetupError](err)
				if !ok || se.Setting != "URL" {
					t.Fatalf("got %v, want a SetupError of URL", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if tg.API != tc.want || tg.Simulated || tg.Model != "m" {
				t.Errorf("got API %q, simulated %v, model %q; want %q, false, m", tg.API, tg.Simulated, tg.Model, tc.want)
			}
		})
	}
}
