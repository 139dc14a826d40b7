package store

import (
	"reflect"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/stats"
)

// pointStat is a statistic of a distribution that the history keeps as a
// column of its points: the statistics metrics.Table marks History.
type pointStat struct {
	// column is the points table's column, "ttft_p95_ms"; key is the
	// Point field's JSON name, as the CSV names the statistic
	// ("ttft_ms_p95"); field is that field's index in Point.
	column, key string
	field       int
	dist        func(*metrics.PointSummary) stats.Dist
	stat        string
}

// pointStats are the points' statistic columns, in table order. A
// statistic without a column fails every Put; one without a Point field
// stops the program at its start.
var pointStats = func() []pointStat {
	var out []pointStat
	for _, m := range metrics.Table {
		for _, st := range m.History {
			column := m.Name + "_" + st
			if m.Unit == "ms" {
				column += "_ms"
			}
			ps := pointStat{column: column, key: m.Field + "_" + st, dist: m.Dist, stat: st}
			ps.field = pointField(ps.key)
			out = append(out, ps)
		}
	}
	return out
}()

// pointField is the index of the *float64 field of Point whose JSON name
// is key.
func pointField(key string) int {
	t := reflect.TypeFor[Point]()
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == key && f.Type == reflect.TypeFor[*float64]() {
			return i
		}
	}
	panic("store.Point has no *float64 field for the history statistic " + key)
}

// pointStatColumns lists the statistic columns for a statement.
func pointStatColumns() string {
	cols := make([]string, len(pointStats))
	for i, ps := range pointStats {
		cols[i] = ps.column
	}
	return strings.Join(cols, ", ")
}

// value is the statistic of p for its column, NULL when nothing was
// measured.
func (ps pointStat) value(p *metrics.PointSummary) any {
	v, ok := ps.dist(p).Get(ps.stat)
	if !ok {
		return nil
	}
	return v
}
