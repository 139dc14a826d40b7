package telemetry

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestOptionsCheck: options that cannot be used are refused naming the
// option (and the value where the message needs it); a URL's password
// stays out of the error.
func TestOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string // the error, "" for none
	}{
		{"the zero value: every default", Options{}, ""},
		{"every option usable", Options{Interval: time.Second, ServerPID: 7, GPUMetricsURL: "http://g:9400/metrics", HostMetricsURL: "https://h:9100/metrics"}, ""},
		{"an interval too fine", Options{Interval: time.Millisecond}, "Interval 1ms: want a duration from 10ms to 1h"},
		{"an interval too coarse", Options{Interval: 2 * time.Hour}, "Interval 2h0m0s: want a duration from 10ms to 1h"},
		{"a negative process id", Options{ServerPID: -3}, "ServerPID -3: want a process id"},
		{"a GPU exporter without a scheme", Options{GPUMetricsURL: "host:9400"}, `GPUMetricsURL: "host:9400" is not an http(s) URL`},
		{"a host exporter over ftp, its password hidden", Options{HostMetricsURL: "ftp://u:hunter22@h"}, `HostMetricsURL: "ftp://u:xxxxx@h" is not an http(s) URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Check()
			got := ""
			if err != nil {
				got = err.Error()
				if _, ok := errors.AsType[*OptionError](err); !ok {
					t.Errorf("%v is no *OptionError", err)
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOptionsRedactor: the redactor hides the user:password of every
// exporter URL.
func TestOptionsRedactor(t *testing.T) {
	o := Options{MetricsURLs: []string{"http://a:pw-metrics-1@m/metrics"}, GPUMetricsURL: "http://b:pw-gpu-22@g", HostMetricsURL: "http://c:pw-host-333@h"}
	got := o.Redactor().String("pw-metrics-1 pw-gpu-22 pw-host-333")
	if strings.Contains(got, "pw-") {
		t.Errorf("redacted %q", got)
	}
}
