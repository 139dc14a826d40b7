package plan

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/servebench/servebench/internal/yamlfield"
)

// Sourced is a number and where it comes from; an empty Source marks the
// number as unsourced (an estimate).
type Sourced struct {
	Value  float64 `yaml:"value" json:"value"`
	Source string  `yaml:"source" json:"source,omitempty"`
}

// DecodeYAML accepts a bare number or {value, source}.
func (s *Sourced) DecodeYAML(d *yamlfield.Decoder, n *yaml.Node, path string) error {
	if n.Kind == yaml.ScalarNode {
		s.Source = ""
		return yamlfield.Float(&s.Value)(n, path)
	}
	value := math.NaN()
	err := d.Mapping(n, path, map[string]yamlfield.Field{"value": yamlfield.Float(&value), "source": yamlfield.String(&s.Source)})
	if err == nil && math.IsNaN(value) {
		err = &yamlfield.Error{Field: path, Line: n.Line, Msg: `want a number or {value: N, source: "..."}`}
	}
	s.Value = value
	return err
}

// Device kinds.
const (
	KindGPU   = "gpu"
	KindApple = "apple"
	KindCPU   = "cpu"
)

// Device is one inference device. Rates are dense peaks; see devices.yaml.
type Device struct {
	Name            string  `yaml:"name" json:"name"`
	Kind            string  `yaml:"kind" json:"kind"`
	Vendor          string  `yaml:"vendor" json:"vendor,omitempty"`
	MemoryGiB       Sourced `yaml:"memory_gib" json:"memory_gib"`
	UsableGiB       Sourced `yaml:"usable_gib" json:"usable_gib"`
	BandwidthGBs    Sourced `yaml:"bandwidth_gbs" json:"bandwidth_gbs"`
	BF16TFLOPS      Sourced `yaml:"bf16_tflops" json:"bf16_tflops"`
	FP8TFLOPS       Sourced `yaml:"fp8_tflops" json:"fp8_tflops"`
	FP16AccTFLOPS   Sourced `yaml:"fp16_acc_tflops" json:"fp16_acc_tflops"`
	Interconnect    string  `yaml:"interconnect" json:"interconnect,omitempty"`
	InterconnectGBs Sourced `yaml:"interconnect_gbs" json:"interconnect_gbs"`
	Notes           string  `yaml:"notes" json:"notes,omitempty"`
}

// Usable is the memory the runtime can allocate, in bytes.
func (d *Device) Usable() int64 {
	v := d.UsableGiB.Value
	if v <= 0 {
		v = d.MemoryGiB.Value
	}
	return int64(v * gib)
}

// Bandwidth is the peak memory bandwidth in bytes/s.
func (d *Device) Bandwidth() float64 { return d.BandwidthGBs.Value * 1e9 }

// FLOPS is the dense peak for a compute class ("bf16", "fp8" or
// "fp16acc"), falling back to BF16 where the device has no rate of its own
// for the class (no FP8; FP16 accumulate no faster than FP32 accumulate).
func (d *Device) FLOPS(class string) float64 {
	if class == "fp8" && d.FP8TFLOPS.Value > 0 {
		return d.FP8TFLOPS.Value * 1e12
	}
	if class == "fp16acc" && d.FP16AccTFLOPS.Value > 0 {
		return d.FP16AccTFLOPS.Value * 1e12
	}
	return d.BF16TFLOPS.Value * 1e12
}

//go:embed devices.yaml
var catalogYAML []byte

// Catalog returns the embedded device catalog.
func Catalog() []Device {
	devs, err := ParseDevices(catalogYAML)
	if err != nil {
		panic("plan: embedded devices.yaml: " + err.Error())
	}
	return devs
}

// ParseDevices reads a devices file in the catalog's format. Unknown fields
// and missing or non-positive numbers are errors naming device and field.
func ParseDevices(data []byte) ([]Device, error) {
	var doc struct {
		Devices []Device `yaml:"devices"`
	}
	d := yamlfield.NewDecoder("(top level)")
	root, err := d.Root(data)
	if err == nil && root != nil {
		err = d.Struct(&doc, nil)(root, "")
	}
	if err != nil {
		return nil, fmt.Errorf("devices file: %w", err)
	}
	if len(doc.Devices) == 0 {
		return nil, errors.New(`devices file: no entries: list them under "devices"`)
	}
	for i := range doc.Devices {
		if err := doc.Devices[i].check(); err != nil {
			return nil, fmt.Errorf("devices file: entry %d (%q): %w", i+1, doc.Devices[i].Name, err)
		}
	}
	return doc.Devices, nil
}

func (d *Device) check() error {
	if strings.TrimSpace(d.Name) == "" {
		return errors.New("name is required")
	}
	if d.Kind == "" {
		d.Kind = KindGPU
	}
	if d.Kind != KindGPU && d.Kind != KindApple && d.Kind != KindCPU {
		return fmt.Errorf("kind %q is not gpu, apple or cpu", d.Kind)
	}
	for _, f := range []struct {
		name     string
		v        float64
		positive bool
	}{
		{"memory_gib", d.MemoryGiB.Value, true}, {"bandwidth_gbs", d.BandwidthGBs.Value, true},
		{"bf16_tflops", d.BF16TFLOPS.Value, true}, {"usable_gib", d.UsableGiB.Value, false},
		{"fp8_tflops", d.FP8TFLOPS.Value, false}, {"interconnect_gbs", d.InterconnectGBs.Value, false},
		{"fp16_acc_tflops", d.FP16AccTFLOPS.Value, false},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || f.v > 1e7 || (f.positive && f.v == 0) {
			return fmt.Errorf("%s must be a positive number, got %v", f.name, f.v)
		}
	}
	if d.UsableGiB.Value > d.MemoryGiB.Value {
		return fmt.Errorf("usable_gib (%v) exceeds memory_gib (%v)", d.UsableGiB.Value, d.MemoryGiB.Value)
	}
	return nil
}

// FindDevice looks a device up by name, ignoring case, spaces, dashes and
// underscores ("h100 sxm" finds "H100-SXM").
func FindDevice(devs []Device, name string) (*Device, bool) {
	key := deviceKey(name)
	for i := range devs {
		if deviceKey(devs[i].Name) == key {
			return &devs[i], true
		}
	}
	return nil, false
}

func deviceKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_':
			return -1
		}
		return r
	}, strings.ToLower(s))
}
