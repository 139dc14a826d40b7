package report

import (
	"testing"

	"github.com/servebench/servebench/internal/slo"
)

// TestOutcomeLine: a candidate's line is its error when it has one, else
// its verdict, else that it was not measured.
func TestOutcomeLine(t *testing.T) {
	v := &slo.Verdict{Text: "capacity c=8"}
	for _, tc := range []struct {
		name string
		x    slo.Outcome
		want string
	}{
		{"measured", slo.Outcome{Verdict: v}, "capacity c=8"},
		{"an error wins over a partial verdict", slo.Outcome{Verdict: v, Error: "preflight: refused"}, "error: preflight: refused"},
		{"stopped before it", slo.Outcome{}, "not measured"},
	} {
		if got := OutcomeLine(tc.x); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
