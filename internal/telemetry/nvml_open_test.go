package telemetry

import (
	"strings"
	"testing"
)

// TestNVMLUnavailable opens the real NVML. On a machine without an NVIDIA
// driver or GPU (and in a build without cgo) it must fail with one clean
// line of reason, not panic; on a GPU machine it must give a source.
func TestNVMLUnavailable(t *testing.T) {
	src, err := NewNVML()
	if err == nil {
		defer src.(*nvmlSource).Close()
		t.Skipf("this machine has GPUs (%s): the unavailable path is not reachable here", src.Name())
	}
	msg := err.Error()
	if msg == "" || strings.Contains(msg, "\n") || len(msg) > 160 {
		t.Fatalf("reason %q: want one short line", msg)
	}
	if src != nil {
		t.Errorf("source %v with error %q: want none", src, msg)
	}
	t.Logf("GPU telemetry unavailable: %s", msg)
}
