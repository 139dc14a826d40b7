package bench

import (
	"maps"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/launch"
	"github.com/servebench/servebench/internal/sweep"
)

// TestConfigLabels: a configuration's run is labelled with the command
// line's labels, its parameters over them, the sweep's name and its GPUs
// when known; its directory is named after it under the sweep's.
func TestConfigLabels(t *testing.T) {
	c := launch.Config{Names: []string{"seqs"}, Values: map[string]string{"seqs": "16", "team": "p"}}
	given := map[string]string{"team": "infra", "gpu": "L4"}
	got := ConfigLabels(given, c, "runs/seqs", 0)
	want := map[string]string{"team": "p", "gpu": "L4", "seqs": "16", "sweep": "seqs"}
	if !maps.Equal(got, want) {
		t.Errorf("ConfigLabels = %v, want %v", got, want)
	}
	if given["team"] != "infra" || len(given) != 2 {
		t.Errorf("the command line's labels changed: %v", given)
	}
	if got := ConfigLabels(nil, c, "runs/seqs/", 2.5); got["gpus"] != "2.5" || got["sweep"] != "seqs" {
		t.Errorf("with GPUs: %v, want gpus=2.5 sweep=seqs", got)
	}
	if got, want := ConfigDir("runs/seqs", c), filepath.Join("runs/seqs", c.Name()); got != want {
		t.Errorf("ConfigDir = %q, want %q", got, want)
	}
}

// TestSweepFile: sweep.json says the command as it could be pasted back,
// every credential redacted, and each configuration's outcome in order.
func TestSweepFile(t *testing.T) {
	s := Sweep{Serve: []string{"srv", "--key", "sk-secret-1", "--name", "a b"}, Env: []string{"HF_TOKEN=sk-secret-1"},
		Redact: func(t string) string { return strings.ReplaceAll(t, "sk-secret-1", "[redacted]") }}
	params := []launch.Param{{Name: "np", Values: []string{"1", "2"}}}
	var results []*ConfigResult
	for _, v := range []string{"1", "2"} {
		results = append(results, &ConfigResult{Outcome: sweep.Outcome{Config: launch.Config{Names: []string{"np"}, Values: map[string]string{"np": v}}, Error: "no start"}})
	}
	f := s.File(params, results, func(launch.Config) float64 { return 1 }, nil, nil)
	if want := "srv --key [redacted] --name 'a b'"; f.Serve != want {
		t.Errorf("serve %q, want %q", f.Serve, want)
	}
	if want := []string{"HF_TOKEN=[redacted]"}; !reflect.DeepEqual(f.Env, want) {
		t.Errorf("env %q, want %q", f.Env, want)
	}
	var names []string
	for _, c := range f.Configs {
		names = append(names, c.Name)
	}
	if want := []string{results[0].Config.Name(), results[1].Config.Name()}; !reflect.DeepEqual(names, want) || !reflect.DeepEqual(f.Params, params) {
		t.Errorf("configs %q, params %v; want %q, %v", names, f.Params, want, params)
	}
}
