package store

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// boundLayouts are the wall-clock forms a date filter takes, read in the
// user's time zone unless they carry their own.
var boundLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// ParseBound reads a date filter (`history --since/--until`): a date
// (2026-12-01), a time (2026-12-01T07:00, or RFC 3339 with a zone), or an
// age back from now (90m, 24h, 7d, 2w). A date alone as an upper bound
// (until) means the end of that day, so that --until 2026-12-01 takes in
// the runs of the 1st.
func ParseBound(s string, now time.Time, until bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, ok := age(s); ok {
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, now.Location()); err == nil {
		if until {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	for _, l := range boundLayouts {
		if t, err := time.ParseInLocation(l, s, now.Location()); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want a date (2026-12-01), a time (2026-12-01T07:00, or RFC 3339) or an age (24h, 7d), got %q", s)
}

// age reads "7d", "2w" and Go durations ("24h", "90m"), positive.
func age(s string) (time.Duration, bool) {
	for unit, d := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || !(v > 0) || v > 1e5 {
				return 0, false
			}
			return time.Duration(v * float64(d)), true
		}
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}

// BoundError: a date filter that cannot be read, named by its bound
// ("since" or "until").
type BoundError struct {
	Bound string
	Err   error
}

func (e *BoundError) Error() string { return e.Bound + ": " + e.Err.Error() }
func (e *BoundError) Unwrap() error { return e.Err }

// Between sets f's Since and Until from the bounds as written (ParseBound;
// "" leaves a bound unset), read against now.
func (f *Filter) Between(since, until string, now time.Time) error {
	for _, b := range []struct {
		name, val string
		into      *time.Time
		until     bool
	}{{"since", since, &f.Since, false}, {"until", until, &f.Until, true}} {
		if b.val == "" {
			continue
		}
		t, err := ParseBound(b.val, now, b.until)
		if err != nil {
			return &BoundError{Bound: b.name, Err: err}
		}
		*b.into = t
	}
	return nil
}

// ParseID reads a run's history id as the user writes it: a whole number
// from 1, "#12" too.
func ParseID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("want a run id such as 12, got %q", s)
	}
	return id, nil
}
