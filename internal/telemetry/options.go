package telemetry

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/servebench/servebench/internal/backend"
)

// Bounds of Options.Interval: finer sampling costs the server more than
// it tells, and a coarser one misses the shape of a load point.
const (
	MinInterval = 10 * time.Millisecond
	MaxInterval = time.Hour
)

// OptionError is an option that cannot be used: Option is its field's
// name and Value, when the message needs it, the value as given.
type OptionError struct {
	Option, Value string
	Err           error
}

func (e *OptionError) Error() string {
	if e.Value == "" {
		return e.Option + ": " + e.Err.Error()
	}
	return e.Option + " " + e.Value + ": " + e.Err.Error()
}

func (e *OptionError) Unwrap() error { return e.Err }

// Flag is the servebench run flag that sets the option; Hint an example
// of it; Usage says the option was given wrong.
func (e *OptionError) Flag() string { return optionFlags[e.Option].flag }
func (e *OptionError) Hint() string {
	return "servebench run --" + optionFlags[e.Option].flag + " " + optionFlags[e.Option].example
}
func (e *OptionError) Usage() bool { return true }

var optionFlags = map[string]struct{ flag, example string }{
	"Interval":       {"sample-interval", "1s"},
	"ServerPID":      {"server-pid", "1234"},
	"GPUMetricsURL":  {"gpu-metrics-url", "http://host:9400/metrics"},
	"HostMetricsURL": {"host-metrics-url", "http://host:9400/metrics"},
}

// Check refuses options that cannot be used, before anything is sampled
// (an *OptionError).
func (o Options) Check() error {
	if err := CheckInterval(o.Interval); err != nil {
		return err
	}
	if o.ServerPID < 0 {
		return &OptionError{Option: "ServerPID", Value: strconv.Itoa(o.ServerPID), Err: errors.New("want a process id")}
	}
	for _, u := range []struct{ option, url string }{{"GPUMetricsURL", o.GPUMetricsURL}, {"HostMetricsURL", o.HostMetricsURL}} {
		if u.url == "" {
			continue
		}
		if err := CheckURL(u.url); err != nil {
			return &OptionError{Option: u.option, Err: err}
		}
	}
	return nil
}

// CheckInterval refuses a sampling interval outside [MinInterval,
// MaxInterval] (0: the default); an *OptionError.
func CheckInterval(d time.Duration) error {
	if d != 0 && (d < MinInterval || d > MaxInterval) {
		return &OptionError{Option: "Interval", Value: d.String(), Err: errors.New("want a duration from 10ms to 1h")}
	}
	return nil
}

// CheckURL refuses an exporter's URL that is no http(s) URL, its
// user:password hidden in the error.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", backend.RedactURL(s))
	}
	return nil
}

// Redactor knows the user:password of the options' URLs, which a page
// they serve may echo.
func (o Options) Redactor() *backend.Redactor {
	return backend.NewURLRedactor(append([]string{o.GPUMetricsURL, o.HostMetricsURL}, o.MetricsURLs...)...)
}
