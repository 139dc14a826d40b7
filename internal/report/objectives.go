package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/servebench/servebench/internal/slo"
)

// Objectives writes objective list's table: per objective its name, loads
// and target, SLOs and description.
func Objectives(w io.Writer, objectives []*slo.Objective) error {
	rows := [][]string{{"name", "load (target)", "SLOs", "what it is"}}
	for _, o := range objectives {
		var exprs []string
		for _, s := range o.Checks() {
			exprs = append(exprs, s.Expr)
		}
		rows = append(rows, []string{o.Name, loadsText(o.Load), strings.Join(exprs, ", "), o.Description})
	}
	return Rows(w, rows)
}

// loadsText is "c=1,2,4,8 (8)" or "r=1,2,4/s (4)".
func loadsText(l slo.Load) string {
	var vals []string
	for _, c := range l.Concurrency {
		vals = append(vals, fmt.Sprint(c))
	}
	for _, r := range l.Rate {
		vals = append(vals, fmt.Sprint(r))
	}
	t := slo.LoadValue(l.TargetLoad())
	if l.Open() {
		return fmt.Sprintf("r=%s/s (%g)", strings.Join(vals, ","), t)
	}
	return fmt.Sprintf("c=%s (%g)", strings.Join(vals, ","), t)
}
