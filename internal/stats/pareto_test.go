package stats

import (
	"math"
	"reflect"
	"testing"
)

func TestPareto(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name string
		x, y []float64
		want []int
	}{
		{"none", nil, nil, nil},
		{"one point is the frontier", []float64{5}, []float64{1}, []int{0}},
		// throughput up, speed down: every point is a trade-off
		{"a trade-off curve", []float64{100, 300, 500}, []float64{50, 40, 20}, []int{0, 1, 2}},
		// point 1 is slower and has less throughput than point 2
		{"a dominated point", []float64{100, 200, 300}, []float64{50, 30, 40}, []int{0, 2}},
		{"equal on one, better on the other", []float64{100, 100}, []float64{50, 40}, []int{0}},
		{"identical points are both on it", []float64{100, 100}, []float64{50, 50}, []int{0, 1}},
		{"given out of order, returned by throughput", []float64{500, 100, 300}, []float64{20, 50, 40}, []int{1, 2, 0}},
		{"NaN is never on it", []float64{100, nan, 300}, []float64{50, 90, nan}, []int{0}},
	} {
		if got := Pareto(c.x, c.y); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Pareto = %v, want %v", c.name, got, c.want)
		}
	}
}
