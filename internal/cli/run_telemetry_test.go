package cli

import (
	"strings"
	"testing"
)

// Telemetry flags that cannot be used stop the run with a usage error
// naming the flag, before any load.
func TestTelemetryFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--sample-interval", "1ms"}, "--sample-interval 1ms: want a duration from 10ms to 1h"},
		{[]string{"--metrics-url", "ftp://host/metrics"}, `"ftp://host/metrics" is not an http(s) URL`},
		{[]string{"--gpu-metrics-url", "host:9400"}, "--gpu-metrics-url"},
		{[]string{"--server-pid", "-3"}, "--server-pid -3: want a process id"},
	}
	for _, tc := range tests {
		args := append([]string{"run", "--concurrency", "1", "--requests", "1"}, tc.args...)
		code, _, stderr := runMain(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("run %v: exit %d, stderr %q; want %d naming %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}
