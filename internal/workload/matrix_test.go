package workload

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

func TestCross(t *testing.T) {
	for _, c := range []struct {
		name             string
		prompts, outputs []string
		want             []string // labels, in run order
		err              string
	}{
		// no flag: the default workload, one cell
		{"defaults", nil, nil, []string{"in=512 out=128"}, ""},
		// prompts outer, outputs inner; a comma stays inside a distribution
		{"cross", []string{"128", "2048", "lognormal:8192,2048"}, []string{"64", "512"}, []string{
			"in=128 out=64", "in=128 out=512", "in=2048 out=64", "in=2048 out=512",
			"in=lognormal:8192,2048 out=64", "in=lognormal:8192,2048 out=512"}, ""},
		// canonical forms name the cell
		{"canonical", []string{"fixed:128"}, []string{" 64"}, []string{"in=128 out=64"}, ""},
		// one flag repeated, the other defaulted
		{"one side", nil, []string{"64", "512"}, []string{"in=512 out=64", "in=512 out=512"}, ""},
		{"repeat", []string{"128", "fixed:128"}, nil, nil, `--prompt-tokens: "fixed:128" repeats "128"`},
		{"bad", nil, []string{"64", "lognormal:8"}, nil, "--output-tokens: length distribution"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cells, err := Cross(c.prompts, c.outputs)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range cells {
				got = append(got, l.Label())
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestMatrixRefusesWhatCannotBeCrossed(t *testing.T) {
	two := []Lengths{{PromptTokens: "128"}, {PromptTokens: "2048"}}
	for _, c := range []struct {
		name  string
		base  Spec
		cells []Lengths
		flag  string // "" = accepted
	}{
		{"dataset", Spec{Dataset: "p.jsonl"}, two, "dataset"},
		{"sessions", Spec{MultiTurn: 3}, two, "multi-turn"},
		{"long context", Spec{LongContext: 4096}, two, "long-context"},
		// a dataset with one cell is the ordinary dataset run
		{"one cell", Spec{Dataset: "p.jsonl"}, two[:1], ""},
		// a shared prefix is checked against every cell: 256 fits 2048, not 128
		{"prefix per cell", Spec{SharedPrefix: 256}, two, "shared-prefix"},
		{"prefix fits", Spec{SharedPrefix: 64}, two, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			specs, err := Matrix(c.base, c.cells)
			if c.flag == "" {
				if err != nil || len(specs) != len(c.cells) {
					t.Fatalf("got %d specs, %v", len(specs), err)
				}
				for i, s := range specs {
					if s.PromptTokens != c.cells[i].PromptTokens || s.SharedPrefix != c.base.SharedPrefix {
						t.Errorf("spec %d = %+v", i, s)
					}
				}
				return
			}
			var se *SpecError
			if !errors.As(err, &se) || se.Flag != c.flag {
				t.Fatalf("err %v, want one naming --%s", err, c.flag)
			}
		})
	}
}

// FuzzCross: any flag values either fail with a *SpecError or make cells
// whose labels split back into distributions that parse to themselves.
func FuzzCross(f *testing.F) {
	f.Add("128", "lognormal:8192,2048", "64")
	f.Add("fixed:128", "128", "uniform:1,2")
	f.Add("normal:5,1,1,9", " out=", "in=1 out=2")
	f.Fuzz(func(t *testing.T, p1, p2, o string) {
		cells, err := Cross([]string{p1, p2}, []string{o})
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for _, c := range cells {
			in, out, ok := record.ParseWorkloadLabel(c.Label())
			if !ok || in != c.PromptTokens || out != c.OutputTokens {
				t.Fatalf("label %q splits into %q %q (%v), want %q %q", c.Label(), in, out, ok, c.PromptTokens, c.OutputTokens)
			}
			if d, err := ParseLengthDist(in); err != nil || d.String() != in {
				t.Fatalf("prompt %q is not canonical: %v", in, err)
			}
		}
	})
}
