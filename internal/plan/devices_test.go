package plan

import (
	"strings"
	"testing"
)

// TestCatalog checks the embedded catalog: every device parses, the
// required devices are there, and a number without a source is exactly
// what the catalog's comments call unsourced.
func TestCatalog(t *testing.T) {
	devs := Catalog()
	for _, name := range []string{"H200", "H100-SXM", "H100-PCIe", "A100-80GB", "A100-40GB", "L40S", "L4", "A10G",
		"RTX-4090", "RTX-5090", "RTX-3090", "MI300X", "M2-Ultra", "M3-Max", "M4-Max", "CPU-DDR5-2ch"} {
		if _, ok := FindDevice(devs, name); !ok {
			t.Errorf("catalog lacks %s", name)
		}
	}
	for _, d := range devs {
		// The datasheet numbers every entry has: memory, bandwidth, BF16.
		for _, n := range []Sourced{d.MemoryGiB, d.BandwidthGBs, d.BF16TFLOPS} {
			if n.Value <= 0 {
				t.Errorf("%s: zero in %+v", d.Name, n)
			}
		}
		// AWS publishes no A10G bandwidth; every other GPU's is sourced.
		if d.Kind == KindGPU && (d.MemoryGiB.Source == "" || (d.BandwidthGBs.Source == "" && d.Name != "A10G")) {
			t.Errorf("%s: a GPU's memory and bandwidth must be sourced", d.Name)
		}
	}
	h100, _ := FindDevice(devs, "h100 sxm")
	if h100.Name != "H100-SXM" || h100.FLOPS("fp8") != 1979e12 || h100.FLOPS("bf16") != 989e12 || h100.Bandwidth() != 3.35e12 {
		t.Errorf("H100: %+v", h100)
	}
	a100, _ := FindDevice(devs, "A100_80GB")
	if a100.FLOPS("fp8") != 312e12 { // no FP8: falls back to BF16
		t.Errorf("A100 fp8 rate %g", a100.FLOPS("fp8"))
	}
}

// TestParseDevices checks a user's devices file.
func TestParseDevices(t *testing.T) {
	good := `devices:
  - name: my-gpu
    memory_gib: 48
    bandwidth_gbs: {value: 960, source: "vendor sheet"}
    bf16_tflops: 150
`
	devs, err := ParseDevices([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	d := devs[0]
	if d.Kind != KindGPU || d.Usable() != 48*gib || d.BandwidthGBs.Source != "vendor sheet" || d.MemoryGiB.Source != "" {
		t.Errorf("parsed %+v", d)
	}
	tests := []struct{ name, yaml, want string }{
		{"empty", "", "no entries"},
		{"unknown field", "devices:\n  - name: x\n    memry_gib: 4\n", "line 3: devices[0].memry_gib: unknown field"},
		{"no name", "devices:\n  - memory_gib: 4\n    bandwidth_gbs: 1\n    bf16_tflops: 1\n", "entry 1 (\"\"): name is required"},
		{"no memory", "devices:\n  - name: x\n    bandwidth_gbs: 1\n    bf16_tflops: 1\n", "memory_gib must be a positive number"},
		{"negative", "devices:\n  - name: x\n    memory_gib: -4\n    bandwidth_gbs: 1\n    bf16_tflops: 1\n", "memory_gib must be a positive number"},
		{"bad kind", "devices:\n  - name: x\n    kind: tpu\n    memory_gib: 4\n    bandwidth_gbs: 1\n    bf16_tflops: 1\n", `kind "tpu"`},
		{"usable above memory", "devices:\n  - name: x\n    memory_gib: 4\n    usable_gib: 5\n    bandwidth_gbs: 1\n    bf16_tflops: 1\n", "usable_gib (5) exceeds memory_gib (4)"},
		{"not yaml", "devices: [", "devices file"},
		{"string number", "devices:\n  - name: x\n    memory_gib: lots\n", `line 3: devices[0].memory_gib: want a number, got "lots"`},
		{"sourced without value", "devices:\n  - name: x\n    memory_gib: {source: sheet}\n", "devices[0].memory_gib: want a number or {value"},
	}
	for _, tt := range tests {
		_, err := ParseDevices([]byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}
