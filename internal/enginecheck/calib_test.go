package enginecheck

import (
	"strings"
	"testing"
)

func TestCheckCalibration(t *testing.T) {
	doc := `{"against":[{"measured":{"concurrency":8,"ttft_p50_ms":100,"decode_tps_per_request":50,"output_tps":400},
	  "predicted":{"concurrency":8,"ttft_p50_ms":130,"decode_tps_per_request":54,"output_tps":380}}]}`
	rows, err := CheckCalibration([]byte(doc), DefaultCalibGoal)
	if err != nil || len(rows) != 3 {
		t.Fatalf("%v %+v", err, rows)
	}
	for _, c := range []struct {
		figure string
		err    float64
		ok     bool
	}{
		{"output tok/s", -0.05, true},     // 380 for 400
		{"decode tok/s/user", 0.08, true}, // 54 for 50
		{"TTFT p50 ms", 0.30, false},      // 130 for 100, beyond 25%
	} {
		var r *CalibRow
		for i := range rows {
			if rows[i].Figure == c.figure {
				r = &rows[i]
			}
		}
		if r == nil || r.Concurrency != 8 || abs(r.Err-c.err) > 1e-9 || r.OK() != c.ok {
			t.Errorf("%s: %+v, want error %v ok %v", c.figure, r, c.err, c.ok)
		}
	}
	var b strings.Builder
	if err := RenderCalib(&b, rows); err != nil || !strings.Contains(b.String(), "MISSED") || !strings.Contains(b.String(), "+30.0%") {
		t.Errorf("render: %v\n%s", err, b.String())
	}
	for _, bad := range []string{`{"against":[]}`, `{}`, `not json`,
		`{"against":[{"measured":{"concurrency":2},"predicted":{"concurrency":2,"output_tps":1}}]}`} {
		if _, err := CheckCalibration([]byte(bad), DefaultCalibGoal); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
