package compare

import (
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
)

// qualify marks each common point whose evidence either run has invalid
// (metrics.Validity of the summary points at its load, every repeat's):
// such a row is INCONCLUSIVE, its reason beside it, and no gate fails or
// passes on it.
func (r *Result) qualify(a, b *Side) {
	for i := range r.Points {
		p := &r.Points[i]
		var why []string
		for _, x := range []struct {
			name string
			s    *Side
		}{{"A", a}, {"B", b}} {
			if v := validityAt(x.s.Summary, p.Load); !v.Valid() {
				why = append(why, x.name+": "+v.String())
			}
		}
		p.Inconclusive = strings.Join(why, "; ")
	}
}

// validityAt is the validity of a summary's points at load l together.
func validityAt(s *metrics.Summary, l record.Load) metrics.Validity {
	var v metrics.Validity
	for _, p := range s.Points {
		if p.Load == l && !s.Run.Superseded(p.Index) {
			v.Merge(p.Validity)
		}
	}
	return v
}

// inconclusive is the gate result on a point whose evidence is invalid:
// neither failed nor passed.
func (gr GateResult) inconclusive(why string) GateResult {
	gr.Failed, gr.Inconclusive = false, true
	gr.Reason = "INCONCLUSIVE: " + why
	return gr
}
