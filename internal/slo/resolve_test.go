package slo

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/workload"
)

// TestResolve: a command line's overrides replace an objective's fields
// one by one, the objective's fields stand for the rest, and what cannot
// be run is refused naming the flag or the field.
func TestResolve(t *testing.T) {
	file, err := ParseObjective([]byte(goodObjective + "  - e2e p99 <= 30s\n"))
	if err != nil {
		t.Fatal(err)
	}
	file.Workload.SharedPrefix = 32
	chat, err := Preset("chat")
	if err != nil {
		t.Fatal(err)
	}
	matrix, err := ParseObjective([]byte("name: m\nload: {concurrency: [1, 2]}\nslos: [ttft p95 <= 1s]\n" +
		"workloads:\n  - {prompt_tokens: 2048, output_tokens: 512}\n  - {prompt_tokens: 128, output_tokens: 64}\n"))
	if err != nil {
		t.Fatal(err)
	}
	commandLine := Objective{Name: "command-line", Priority: PriorityResponsiveness, Load: Load{Concurrency: []int{1, 2, 4, 8, 16}}}
	ttft, _ := Parse("ttft p95 <= 250ms")
	speed, _ := Parse("speed p95 >= 30 tok/s")
	zero, eight, dur := 0, 8, 90*time.Second

	type want struct {
		lengths   [2]string // the workload's prompt and output lengths
		workloads []string  // the list's labels
		load      Load
		slos      string
		shared    int // workload.shared_prefix
	}
	fileWant := want{lengths: [2]string{"uniform:100,200", "64"}, shared: 32,
		load: Load{Concurrency: []int{1, 2, 4}, Requests: 50, Warmup: "2"},
		slos: "ttft p95 <= 1.5s; speed p95 >= 20 tok/s; e2e p99 <= 30s"}
	with := func(w want, f func(*want)) want { f(&w); return w }

	for _, c := range []struct {
		name string
		base Objective
		ov   Overrides
		want want
		err  string // a part of the error, instead of want
	}{
		{"file only", *file, Overrides{}, fileWant, ""},
		// each flag given replaces its field; the rest are the file's
		{"flag overrides file", *file, Overrides{Concurrency: []int{3, 6}, OutputTokens: []string{"32"}, SLOs: []SLO{ttft},
			Workload: workload.Spec{SharedPrefix: 0}, WorkloadGiven: []string{"shared-prefix"}},
			with(fileWant, func(w *want) {
				w.lengths[1], w.shared, w.load.Concurrency = "32", 0, []int{3, 6}
				w.slos = "ttft p95 <= 250ms; speed p95 >= 20 tok/s; e2e p99 <= 30s"
			}), ""},
		// a workload value without its flag named is not given
		{"workload flag not given", *file, Overrides{Workload: workload.Spec{SharedPrefix: 0, MultiTurn: 3}}, fileWant, ""},
		// SLOs on new metrics are added, and the defaults fill the lengths
		{"flag only", commandLine, Overrides{SLOs: []SLO{ttft, speed}, Requests: &eight},
			want{lengths: [2]string{"512", "128"}, load: Load{Concurrency: []int{1, 2, 4, 8, 16}, Requests: 8},
				slos: "ttft p95 <= 250ms; speed p95 >= 30 tok/s"}, ""},
		// requests and duration go together: a duration replaces the file's count
		{"duration replaces requests", *file, Overrides{Duration: &dur},
			with(fileWant, func(w *want) { w.load.Requests, w.load.Duration = 0, "1m30s" }), ""},
		// a warm-up of none given replaces the file's
		{"no warm-up", *file, Overrides{Warmup: &Warmup{}}, with(fileWant, func(w *want) { w.load.Warmup = "" }), ""},
		{"counted warm-up", *file, Overrides{Warmup: &Warmup{Requests: 5}}, with(fileWant, func(w *want) { w.load.Warmup = "5" }), ""},
		{"timed warm-up", *file, Overrides{Warmup: &Warmup{Duration: 10 * time.Second}}, with(fileWant, func(w *want) { w.load.Warmup = "10s" }), ""},
		// rates replace concurrencies, and the concurrency target with them
		{"rate list", *chat, Overrides{Rate: []float64{0.5, 1, 2}, MaxConcurrency: &eight},
			want{lengths: [2]string{chat.Workload.PromptTokens, chat.Workload.OutputTokens},
				load: Load{Rate: []float64{0.5, 1, 2}, MaxConcurrency: 8, Requests: 100}, slos: sloText(chat)}, ""},
		// a concurrency list keeps a concurrency target; --target-load replaces it
		// a cap of none given is no cap
		{"no cap", *chat, Overrides{MaxConcurrency: &zero, Rate: []float64{1}},
			want{lengths: [2]string{chat.Workload.PromptTokens, chat.Workload.OutputTokens},
				load: Load{Rate: []float64{1}, Requests: 100}, slos: sloText(chat)}, ""},
		{"concurrency list", *chat, Overrides{Concurrency: []int{4, 12}},
			want{lengths: [2]string{chat.Workload.PromptTokens, chat.Workload.OutputTokens},
				load: Load{Concurrency: []int{4, 12}, Target: 8, Requests: 100}, slos: sloText(chat)}, ""},
		{"target", *chat, Overrides{Target: 16},
			want{lengths: [2]string{chat.Workload.PromptTokens, chat.Workload.OutputTokens},
				load: Load{Concurrency: chat.Load.Concurrency, Target: 16, Requests: 100}, slos: sloText(chat)}, ""},
		// repeated lengths make a list, crossed with the objective's other length
		{"length matrix", *chat, Overrides{PromptTokens: []string{"128", "256"}},
			want{workloads: []string{"in=128 out=lognormal:256,192,16,1024", "in=256 out=lognormal:256,192,16,1024"},
				load: Load{Concurrency: chat.Load.Concurrency, Target: 8, Requests: 100}, slos: sloText(chat)}, ""},
		// an objective's list stands without length flags, and goes with them
		{"listed workloads", *matrix, Overrides{},
			want{workloads: []string{"in=2048 out=512", "in=128 out=64"}, load: Load{Concurrency: []int{1, 2}}, slos: "ttft p95 <= 1s"}, ""},
		{"lengths replace the list", *matrix, Overrides{PromptTokens: []string{"64"}},
			want{lengths: [2]string{"64", "128"}, load: Load{Concurrency: []int{1, 2}}, slos: "ttft p95 <= 1s"}, ""},

		{"both loops", *chat, Overrides{Concurrency: []int{1}, Rate: []float64{1}}, want{}, "--concurrency and --rate are exclusive"},
		{"no SLO", commandLine, Overrides{Concurrency: []int{2}}, want{}, "objective command-line has no SLO"},
		{"fractional target", *chat, Overrides{Concurrency: []int{2}, Target: 2.5}, want{}, "objective chat: load.target: a concurrency is a whole number"},
		{"cap on a closed loop", *chat, Overrides{MaxConcurrency: &eight}, want{}, "objective chat: load.max_concurrency"},
		{"negative requests", *file, Overrides{Requests: new(-1)}, want{}, "objective mine: load.requests"},
		{"bad length", *chat, Overrides{PromptTokens: []string{"zipf:1"}}, want{}, "objective chat: workload.prompt_tokens"},
		{"repeated length", *chat, Overrides{PromptTokens: []string{"128", "128"}}, want{}, `--prompt-tokens: "128" repeats "128"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := sloText(&c.base)
			got, err := Resolve(c.base, c.ov)
			if c.err != "" || err != nil {
				if c.err == "" || err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one saying %q", err, c.err)
				}
				return
			}
			if sloText(&c.base) != before {
				t.Errorf("the objective given was changed: %s", sloText(&c.base))
			}
			var labels []string
			for _, w := range got.Workloads {
				labels = append(labels, w.Label())
			}
			g := want{lengths: [2]string{got.Workload.PromptTokens, got.Workload.OutputTokens}, workloads: labels,
				load: got.Load, slos: sloText(got), shared: got.Workload.SharedPrefix}
			if !reflect.DeepEqual(g, c.want) {
				t.Errorf("\n got %+v\nwant %+v", g, c.want)
			}
		})
	}
}

// TestResolveCrossError: length flags that cannot be crossed are a
// workload.SpecError, told in the flag's terms.
func TestResolveCrossError(t *testing.T) {
	chat, _ := Preset("chat")
	_, err := Resolve(*chat, Overrides{OutputTokens: []string{"64", "zipf:2"}})
	if _, ok := errors.AsType[*workload.SpecError](err); !ok {
		t.Errorf("err %v (%T), want a *workload.SpecError", err, err)
	}
	_, err = Resolve(*chat, Overrides{Concurrency: []int{1}, Rate: []float64{1}})
	if !errors.Is(err, ErrClosedAndOpen) {
		t.Errorf("err %v, want ErrClosedAndOpen", err)
	}
}

func sloText(o *Objective) string {
	var exprs []string
	for _, s := range o.SLOs {
		exprs = append(exprs, s.Expr)
	}
	return strings.Join(exprs, "; ")
}
