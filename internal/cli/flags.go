package cli

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/backend"
)

// intList parses "1,2,4,8" (the --concurrency flag).
func intList(flagName, s string) ([]int, error) {
	hint := "servebench run --" + flagName + " 1,2,4,8"
	var out []int
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, usagef(hint, "--%s %q: item %d is empty", flagName, s, i+1)
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, usagef(hint, "--%s %q: %q is not a positive whole number", flagName, s, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// joinInts is intList's inverse, for a default shown in a flag's usage.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// maxRate bounds a request rate: beyond it a rate is a typo, not a load
// one client could pace.
const maxRate = 1e6

// floatList parses "0.5,1,2" (the --rate flag).
func floatList(flagName, s string) ([]float64, error) {
	hint := "servebench run --" + flagName + " 0.5,1,2"
	var out []float64
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		switch {
		case f == "":
			return nil, usagef(hint, "--%s %q: item %d is empty", flagName, s, i+1)
		case err != nil && !errors.Is(err, strconv.ErrRange), math.IsNaN(v):
			return nil, usagef(hint, "--%s %q: %q is not a number of requests per second", flagName, s, f)
		case math.IsInf(v, 1) && err == nil:
			return nil, usagef("servebench run --concurrency 100 (every request in flight at once)", "--%s %q: an infinite rate sends every request at once, which is a closed loop", flagName, s)
		case v <= 0:
			return nil, usagef(hint, "--%s %q: %q is not a positive number of requests per second", flagName, s, f)
		case v > maxRate:
			return nil, usagef(hint, "--%s %q: %q requests per second is more than the %.0f a run can send", flagName, s, f, float64(maxRate))
		}
		out = append(out, v)
	}
	return out, nil
}

// headerFlag collects repeated --header "Name: value" flags.
type headerFlag struct{ h http.Header }

func (f *headerFlag) String() string { return "" }

// redact hides the value of a header given on the command line, for a
// message that shows it: a credential header's value, and, when the colon
// is missing, all but the first word (which names the header).
func (f *headerFlag) redact(s string) string {
	name, _, ok := strings.Cut(s, ":")
	if ok && strings.TrimSpace(name) != "" && !backend.IsCredentialHeader(name) {
		return s
	}
	if !ok {
		name, _, ok = strings.Cut(strings.TrimSpace(s), " ")
	}
	if !ok {
		return s
	}
	return strings.TrimSpace(name) + " [redacted]"
}

func (f *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return errors.New(`want "Name: value"`)
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	return nil
}

// warmupFlag is a warm-up given as a request count ("5") or a duration
// ("10s").
type warmupFlag struct {
	requests int
	duration time.Duration
}

func (f *warmupFlag) String() string {
	if f.duration > 0 {
		return f.duration.String()
	}
	return strconv.Itoa(f.requests)
}

func (f *warmupFlag) Set(s string) error {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		f.requests, f.duration = n, 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return errors.New("want a request count (5) or a duration (10s)")
	}
	f.requests, f.duration = 0, d
	return nil
}
