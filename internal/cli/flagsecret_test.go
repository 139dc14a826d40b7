package cli

import (
	"strings"
	"testing"
)

// TestFlagErrorsHideCredentials: a flag refused for its form still names
// the flag and what was wrong, never the credential in its value.
func TestFlagErrorsHideCredentials(t *testing.T) {
	const secret = "sk-secret-0123456789"
	tests := []struct {
		args []string
		want string // in the error
	}{
		// the colon forgotten: the first word names the header
		{[]string{"--header", "Authorization Bearer " + secret}, `--header wants "Name: value", got "Authorization [redacted]"`},
		{[]string{"--header", "X-Api-Key " + secret}, `got "X-Api-Key [redacted]"`},
		{[]string{"--header", ": " + secret}, `--header wants "Name: value"`},
		{[]string{"--metrics-url", "ftp://u:" + secret + "@h/metrics"}, `is not an http(s) URL`},
		{[]string{"--gpu-metrics-url", "ftp://u:" + secret + "@h"}, `--gpu-metrics-url: "ftp://u:xxxxx@h" is not an http(s) URL`},
		{[]string{"--host-metrics-url", "ftp://u:" + secret + "@h"}, `--host-metrics-url`},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, append([]string{"run", "--requests", "1"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, %q; want a usage error with %q", tt.args, code, stderr, tt.want)
		}
		if strings.Contains(stderr, secret) {
			t.Errorf("%q: the error shows the credential: %q", tt.args, stderr)
		}
	}
}
