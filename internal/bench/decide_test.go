package bench

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// decider measures a candidate at concurrency 1 with two requests, and
// says what it saw.
func decider(events *[]string, cancel context.CancelFunc) Decider {
	return Decider{
		Measurement: func(c slo.Candidate) (Measurement, error) {
			if c.Name == "broken" {
				return Measurement{}, errors.New("bad flags")
			}
			l := Launch{Spec: TargetSpec{Server: backend.TargetOptions{URL: c.URL}, Model: c.Model}}
			return Measurement{Launch: l, Setup: func(*Target) (Setup, error) {
				p := load.Point{Load: record.Load{Concurrency: 1}, Requests: 2}
				return Setup{Tokenizer: "cl100k_base", Points: []load.Point{p}, Seed: 1}, nil
			}}, nil
		},
		Measured: func(x slo.Outcome, got *Measured) {
			*events = append(*events, x.Candidate.Name+":"+x.Error)
			if cancel != nil {
				cancel()
			}
		},
		ErrorText: func(err error) string { return "said " + err.Error() },
	}
}

// TestDecide: every server candidate is checked before any is measured,
// and one that fails stops the decision, named; the others are measured
// in turn, a simulated one on its own simulator, a candidate that cannot
// be measured kept with its error in the caller's words, and a
// cancellation stops after the candidate being measured.
func TestDecide(t *testing.T) {
	obj, err := slo.Resolve(slo.Objective{Name: "o"}, slo.Overrides{Concurrency: []int{1}, SLOs: []slo.SLO{mustSLO(t, "ttft p95 <= 60s")}})
	if err != nil {
		t.Fatal(err)
	}
	sim4 := slo.Candidate{Name: "sim-4", Simulated: true, Sim: []byte("engine: {max_num_seqs: 4}\n")}
	sim8 := slo.Candidate{Name: "sim-8", Simulated: true, Sim: []byte("engine: {max_num_seqs: 8}\n")}
	badSim := slo.Candidate{Name: "bad-sim", Simulated: true, Sim: []byte("engine: {max_num_seqs: -1}\n")}
	gone := slo.Candidate{Name: "gone", URL: "http://127.0.0.1:1", Model: "m"}

	t.Run("a server that fails its check: none measured", func(t *testing.T) {
		var events []string
		_, err := Decide(t.Context(), obj, []slo.Candidate{sim4, gone}, decider(&events, nil))
		ce, ok := errors.AsType[*CandidateError](err)
		if !ok || ce.Name != "gone" || !strings.HasPrefix(err.Error(), "candidate gone: ") {
			t.Fatalf("got %v, want the failing candidate's error", err)
		}
		if _, ok := errors.AsType[*backend.PreflightError](err); !ok || len(events) > 0 {
			t.Errorf("got %v after measuring %q; want the preflight's error before any", err, events)
		}
	})
	t.Run("each measured in turn, errors kept", func(t *testing.T) {
		var events []string
		d, err := Decide(t.Context(), obj, []slo.Candidate{sim4, {Name: "broken", Simulated: true}, badSim, sim8}, decider(&events, nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(events, " | "); !strings.HasPrefix(got, "sim-4: | broken:said bad flags | bad-sim:said ") || !strings.HasSuffix(got, " | sim-8:") {
			t.Errorf("outcomes %q", got)
		}
		if len(d.Outcomes) != 4 || d.Outcomes[3].Server[record.ServerMaxNumSeqs] != "8" || d.Outcomes[0].Server[record.ServerMaxNumSeqs] != "4" ||
			d.Outcomes[0].Verdict == nil {
			t.Errorf("the simulated candidates were not measured on their own simulators: %+v", d.Outcomes)
		}
	})
	t.Run("cancelled: the decision covers those measured", func(t *testing.T) {
		var events []string
		ctx, cancel := context.WithCancel(t.Context())
		d, err := Decide(ctx, obj, []slo.Candidate{sim4, sim8}, decider(&events, cancel))
		if err != nil || len(d.Outcomes) != 1 || len(events) != 1 {
			t.Errorf("got %v, %d outcomes after %q; want the first alone", err, len(d.Outcomes), events)
		}
	})
}

// TestCandidateLabels: a candidate's labels win over the command line's,
// and neither map given is changed.
func TestCandidateLabels(t *testing.T) {
	given := map[string]string{"gpu": "L4", "team": "infra"}
	c := slo.Candidate{Name: "a", Labels: map[string]string{"gpu": "A100", "cost": "2"}}
	got := CandidateLabels(given, c)
	want := map[string]string{"gpu": "A100", "team": "infra", "cost": "2"}
	if !maps.Equal(got, want) {
		t.Errorf("CandidateLabels = %v, want %v", got, want)
	}
	if given["gpu"] != "L4" || len(given) != 2 {
		t.Errorf("the command line's labels changed: %v", given)
	}
	if got := CandidateLabels(nil, slo.Candidate{Name: "b"}); got == nil || len(got) != 0 {
		t.Errorf("no labels: %v, want an empty map to add to", got)
	}
}
