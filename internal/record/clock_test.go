package record

import (
	"reflect"
	"testing"
)

func TestModelTime(t *testing.T) {
	raw := Record{
		Load: Load{Rate: 2}, ScheduledNS: 100, SentNS: 110, FirstTokenNS: 150, FirstOutputNS: 160, EndNS: 300,
		Chunks: []Chunk{{AtNS: 40, Tokens: 1}, {AtNS: 190, Tokens: 2}},
		Server: &ServerTiming{PromptEvalCount: 5, PromptEvalDuration: 20, EvalDuration: 100, TotalDuration: 130, LoadDuration: 1},
	}
	keep := raw
	keep.Chunks = append([]Chunk(nil), raw.Chunks...)
	srv := *raw.Server
	keep.Server = &srv

	got := raw.ModelTime(10)
	want := Record{
		// The load names the point as asked: it is not a measured time.
		Load: Load{Rate: 2}, ScheduledNS: 1000, SentNS: 1100, FirstTokenNS: 1500, FirstOutputNS: 1600, EndNS: 3000,
		Chunks: []Chunk{{AtNS: 400, Tokens: 1}, {AtNS: 1900, Tokens: 2}},
		Server: &ServerTiming{PromptEvalCount: 5, PromptEvalDuration: 200, EvalDuration: 1000, TotalDuration: 1300, LoadDuration: 10},
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("ModelTime(10):\n got %+v\nwant %+v", *got, want)
	}
	// The record measured stays as measured (it is what records.jsonl holds).
	if !reflect.DeepEqual(raw, keep) {
		t.Errorf("ModelTime changed its receiver: %+v", raw)
	}
	// No token yet stays "no token", not a time.
	if r := (&Record{SentNS: 5}).ModelTime(3); r.FirstTokenNS != 0 || r.SentNS != 15 {
		t.Errorf("a zero instant must stay zero: %+v", r)
	}
	for _, s := range []float64{0, 1} {
		if r := raw.ModelTime(s); r != &raw {
			t.Errorf("ModelTime(%v) should return the record itself", s)
		}
	}
}

func TestRunScale(t *testing.T) {
	for _, tt := range []struct {
		run  *Run
		want float64
	}{
		{nil, 1},                    // records without run.json
		{&Run{}, 1},                 // a real server
		{&Run{TimeScale: 10}, 10},   // the built-in simulator
		{&Run{TimeScale: -3}, 1},    // a damaged file is not a scale
		{&Run{TimeScale: 0.5}, 0.5}, // slowed down
		// An older run.json: the scale only in what the simulator said.
		{&Run{Target: Target{Server: map[ServerKey]string{ServerTimeScale: "10"}}}, 10},
		{&Run{TimeScale: 4, Target: Target{Server: map[ServerKey]string{ServerTimeScale: "10"}}}, 4},
		{&Run{Target: Target{Server: map[ServerKey]string{ServerTimeScale: "fast"}}}, 1},
	} {
		if got := tt.run.Scale(); got != tt.want {
			t.Errorf("%+v.Scale() = %v, want %v", tt.run, got, tt.want)
		}
	}
}
