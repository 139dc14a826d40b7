package store

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseBound(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, cet)
	for _, tc := range []struct {
		in    string
		until bool
		want  time.Time
		err   bool
	}{
		{"2026-11-20", false, time.Date(2026, 11, 20, 0, 0, 0, 0, cet), false},       // a day starts in the user's zone
		{"2026-11-20", true, time.Date(2026, 11, 21, 0, 0, 0, 0, cet), false},        // until a day takes the whole day in
		{"2026-11-20T07:15", true, time.Date(2026, 11, 20, 7, 15, 0, 0, cet), false}, // a time is the time, either way
		{"2026-11-20 07:15:30", false, time.Date(2026, 11, 20, 7, 15, 30, 0, cet), false},
		{"2026-11-20T07:15:00Z", false, time.Date(2026, 11, 20, 7, 15, 0, 0, time.UTC), false}, // its own zone wins
		{"24h", false, now.Add(-24 * time.Hour), false},
		{"90m", true, now.Add(-90 * time.Minute), false},
		{"7d", false, now.AddDate(0, 0, -7), false},
		{"1.5d", false, now.Add(-36 * time.Hour), false},
		{"2w", false, now.AddDate(0, 0, -14), false},
		{" 7d ", false, now.AddDate(0, 0, -7), false},
		{"-7d", false, time.Time{}, true}, // the future is no history
		{"-1h", false, time.Time{}, true},
		{"0d", false, time.Time{}, true},
		{"yesterday", false, time.Time{}, true},
		{"2026-13-01", false, time.Time{}, true},
		{"", false, time.Time{}, true},
	} {
		got, err := ParseBound(tc.in, now, tc.until)
		if (err != nil) != tc.err || !got.Equal(tc.want) {
			t.Errorf("ParseBound(%q, until=%v) = %v, %v; want %v (error %v)", tc.in, tc.until, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), "want a date") {
			t.Errorf("ParseBound(%q): error %q does not say what it wants", tc.in, err)
		}
	}
}

// Whatever is typed, ParseBound answers with a time or an error that says
// what it wants; it never panics, and an age is never in the future.
func FuzzParseBound(f *testing.F) {
	for _, s := range []string{"2026-12-01", "2026-12-01T07:00", "24h", "7d", "1e309d", "2w", "-1h", "9999999999h"} {
		f.Add(s, false)
	}
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string, until bool) {
		got, err := ParseBound(s, now, until)
		if err != nil {
			if !strings.Contains(err.Error(), "want a date") {
				t.Fatalf("error without the forms wanted: %v", err)
			}
			return
		}
		if _, isAge := age(strings.TrimSpace(s)); isAge && got.After(now) {
			t.Fatalf("age %q is after now: %v", s, got)
		}
	})
}

// TestFilterBetween: each bound is read as ParseBound reads it, an empty
// one left unset, and one that cannot be read is named.
func TestFilterBetween(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	var f Filter
	if err := f.Between("7d", "", now); err != nil || !f.Since.Equal(now.AddDate(0, 0, -7)) || !f.Until.IsZero() {
		t.Errorf("since 7d: %v, since %v, until %v; want a week back and no upper bound", err, f.Since, f.Until)
	}
	if err := f.Between("", "2026-11-30", now); err != nil || !f.Until.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("until 2026-11-30: %v, until %v; want the end of that day", err, f.Until)
	}
	for _, tc := range []struct{ since, until, bound string }{
		{"yesterday", "", "since"}, // an unreadable lower bound
		{"", "-1h", "until"},       // an unreadable upper bound
	} {
		err := (&Filter{}).Between(tc.since, tc.until, now)
		if be, ok := errors.AsType[*BoundError](err); !ok || be.Bound != tc.bound || !strings.Contains(be.Error(), "want a date") {
			t.Errorf("Between(%q, %q) = %v, want a BoundError naming %s", tc.since, tc.until, err, tc.bound)
		}
	}
}

// TestParseID: a history id is a whole number from 1, with or without #.
func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"12", 12},  // as history lists it
		{"#12", 12}, // as history show prints it
		{"0", 0},    // ids start at 1
		{"-3", 0},
		{"12a", 0},
		{"", 0},
	} {
		got, err := ParseID(tc.in)
		if got != tc.want || (err != nil) != (tc.want == 0) {
			t.Errorf("ParseID(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
