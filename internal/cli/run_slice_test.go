package cli

import (
	"strings"
	"testing"
	"time"
)

// TestSliceResolve: --slice is the length bench.SliceLength takes (its
// table is bench's), one longer than --duration is a usage error naming
// both flags, and the flag takes positive durations only.
func TestSliceResolve(t *testing.T) {
	tests := []struct {
		name  string
		flag  string // "" when not given
		dur   time.Duration
		want  time.Duration
		error string
	}{
		{"given", "1m", 30 * time.Minute, time.Minute, ""},
		{"longer than the duration", "2m", time.Minute, 0, "--slice 2m0s is longer than --duration 1m0s"},
		{"long run: a minute by default", "", 10 * time.Minute, time.Minute, ""},
	}
	for _, tt := range tests {
		var f sliceFlag
		if tt.flag != "" {
			if err := f.Set(tt.flag); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
		}
		got, err := f.resolve(tt.dur)
		if got != tt.want || (err == nil) != (tt.error == "") || (err != nil && !strings.Contains(err.Error(), tt.error)) {
			t.Errorf("%s: %v, %v; want %v, %q", tt.name, got, err, tt.want, tt.error)
		}
	}
	for _, bad := range []string{"0", "0s", "-1s", "1", "soon"} {
		var f sliceFlag
		if f.Set(bad) == nil {
			t.Errorf("--slice %s accepted", bad)
		}
	}
}
