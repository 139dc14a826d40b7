//go:build !unix

package load

// CPUSeconds is not measured on this platform: always 0.
func CPUSeconds() float64 { return 0 }
