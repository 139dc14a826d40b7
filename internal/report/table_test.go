package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
)

// TestReportCoversMetricTable: every row of metrics.Table marked CSV has
// its statistics as CSV columns, and every row marked Chart is drawn
// with its SLO lines on a chart of the page's script.
func TestReportCoversMetricTable(t *testing.T) {
	head := csvRows(&metrics.Summary{})[0]
	for _, m := range metrics.Table {
		if m.CSV && !slices.Contains(head, m.Field+"_p50") {
			t.Errorf("%s: marked CSV, but the CSV has no column %s_p50", m.Field, m.Field)
		}
		if m.Chart && !strings.Contains(pageJS, `sloMarks("`+m.Name+`"`) && !strings.Contains(pageJS, `"`+m.Field+`", "`+m.Name+`"`) {
			t.Errorf("%s: marked Chart, but the page draws no chart %q with SLO lines", m.Name, m.Name)
		}
	}
}
