//go:build !linux

package telemetry

import (
	"fmt"
	"runtime"
)

// NewHostSource: reading the server process and the machine's memory
// needs Linux's proc file system; elsewhere the run goes on without them
// (a node exporter, --host-metrics-url, still reports a host).
func NewHostSource(o HostOptions) (Source, string, error) {
	return nil, "", fmt.Errorf("%w: reading processes and memory needs Linux's /proc (this is %s); --host-metrics-url reads a node exporter instead", ErrHostUnavailable, runtime.GOOS)
}
