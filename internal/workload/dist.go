// Package workload owns what is sent: prompt- and output-length
// distributions and the sources that turn them into requests.
package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// LengthDist is a seeded distribution of token lengths. Draws are at least 1.
type LengthDist struct {
	Kind   string  // fixed, uniform, normal, lognormal
	A, B   float64 // fixed: A; uniform: [A,B]; normal/lognormal: mean A, std dev B
	Lo, Hi float64 // optional clamp (0 = none) for normal and lognormal
}

// ParseLengthDist parses a length distribution:
//
//	512                    fixed
//	fixed:512
//	uniform:256,1024       integers in [256, 1024]
//	normal:512,128         mean, standard deviation (optional ,MIN,MAX clamp)
//	lognormal:512,256      mean, standard deviation of the lognormal itself (optional ,MIN,MAX)
func ParseLengthDist(s string) (LengthDist, error) {
	s = strings.TrimSpace(s)
	kind, args, ok := strings.Cut(s, ":")
	if !ok {
		kind, args = "fixed", s
	}
	var nums []float64
	for _, f := range strings.Split(args, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return LengthDist{}, fmt.Errorf("length distribution %q: %q is not a non-negative number", s, f)
		}
		nums = append(nums, v)
	}
	d := LengthDist{Kind: kind}
	switch kind {
	case "fixed":
		if len(nums) != 1 || nums[0] < 1 {
			return LengthDist{}, fmt.Errorf("length distribution %q: fixed takes one length of at least 1", s)
		}
		d.A = nums[0]
	case "uniform":
		if len(nums) != 2 || nums[0] < 1 || nums[1] < nums[0] {
			return LengthDist{}, fmt.Errorf("length distribution %q: uniform takes MIN,MAX with 1 <= MIN <= MAX", s)
		}
		d.A, d.B = nums[0], nums[1]
	case "normal", "lognormal":
		if (len(nums) != 2 && len(nums) != 4) || nums[0] < 1 {
			return LengthDist{}, fmt.Errorf("length distribution %q: %s takes MEAN,SD or MEAN,SD,MIN,MAX with MEAN >= 1", s, kind)
		}
		d.A, d.B = nums[0], nums[1]
		if len(nums) == 4 {
			if nums[3] < nums[2] {
				return LengthDist{}, fmt.Errorf("length distribution %q: MAX is below MIN", s)
			}
			d.Lo, d.Hi = nums[2], nums[3]
		}
	default:
		return LengthDist{}, fmt.Errorf("length distribution %q: unknown kind %q (fixed, uniform, normal, lognormal)", s, kind)
	}
	return d, nil
}

// String formats d so that ParseLengthDist(d.String()) == d.
func (d LengthDist) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch d.Kind {
	case "fixed", "":
		return f(d.A)
	case "uniform":
		return "uniform:" + f(d.A) + "," + f(d.B)
	}
	s := d.Kind + ":" + f(d.A) + "," + f(d.B)
	if d.Hi > 0 {
		s += "," + f(d.Lo) + "," + f(d.Hi)
	}
	return s
}

// Mean returns the distribution's mean before clamping and rounding.
func (d LengthDist) Mean() float64 {
	if d.Kind == "uniform" {
		return (d.A + d.B) / 2
	}
	return d.A
}

// Max returns the largest length the distribution can draw, or 0 when it is
// unbounded.
func (d LengthDist) Max() int {
	switch d.Kind {
	case "fixed", "":
		return int(d.A)
	case "uniform":
		return int(d.B)
	}
	return int(d.Hi)
}

// Min returns the smallest length the distribution can draw: 1 for an
// unclamped normal or lognormal.
func (d LengthDist) Min() int {
	switch d.Kind {
	case "fixed", "":
		return max(1, int(d.A))
	case "uniform":
		return max(1, int(d.A))
	}
	if d.Hi > 0 {
		return max(1, int(math.Round(d.Lo)))
	}
	return 1
}

// Draw returns one length.
func (d LengthDist) Draw(r *rand.Rand) int {
	var v float64
	switch d.Kind {
	case "fixed", "":
		return max(1, int(d.A))
	case "uniform":
		return int(d.A) + r.IntN(int(d.B)-int(d.A)+1)
	case "normal":
		v = d.A + d.B*r.NormFloat64()
	case "lognormal":
		// Choose mu, sigma so the lognormal itself has mean A and sd B.
		s2 := math.Log1p((d.B * d.B) / (d.A * d.A))
		v = math.Exp(math.Log(d.A) - s2/2 + math.Sqrt(s2)*r.NormFloat64())
	}
	if d.Hi > 0 {
		v = min(max(v, d.Lo), d.Hi)
	}
	return max(1, int(math.Round(v)))
}
