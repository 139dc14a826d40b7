//go:build !(cgo && linux)

package telemetry

import (
	"errors"
	"runtime"
)

// openNVML has no NVML to open: go-nvml needs cgo to load the driver's
// library, and a static build (CGO_ENABLED=0) or a non-Linux one has none.
func openNVML() (nvmlLib, error) {
	if runtime.GOOS != "linux" {
		return nil, errors.New("NVML is read on Linux only; use --gpu-metrics-url with a DCGM exporter")
	}
	return nil, errors.New("this servebench was built without cgo (static build), which NVML needs; use --gpu-metrics-url with a DCGM exporter")
}
