package store

import (
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
