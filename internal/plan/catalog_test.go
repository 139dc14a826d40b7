package plan

import (
	"errors"
	"testing"
)

// A catalog file's device replaces the catalog's of the same name and
// adds the others; a selection names devices, and an unknown one is named.
func TestWithDevicesAndSelect(t *testing.T) {
	extra := []byte(`devices:
  - name: H200
    memory_gib: 48
    bandwidth_gbs: 960
    bf16_tflops: 150
  - name: my-gpu
    memory_gib: 24
    bandwidth_gbs: 500
    bf16_tflops: 80
`)
	n := len(Catalog())
	devs, err := WithDevices(Catalog(), extra)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := FindDevice(devs, "H200"); len(devs) != n+1 || !ok || h.MemoryGiB.Value != 48 {
		t.Errorf("%d devices (want %d), H200 %+v: want the file's H200 in place of the catalog's and my-gpu added", len(devs), n+1, h)
	}
	got, err := SelectDevices(devs, []string{"my-gpu", " H200"})
	if err != nil || len(got) != 2 || got[0].Name != "my-gpu" || got[1].Name != "H200" {
		t.Errorf("selected %+v, %v; want my-gpu then H200", got, err)
	}
	if all, _ := SelectDevices(devs, nil); len(all) != len(devs) {
		t.Errorf("no names selected %d devices, want all %d", len(all), len(devs))
	}
	_, err = SelectDevices(devs, []string{"H201"})
	if u, ok := errors.AsType[*UnknownDeviceError](err); !ok || u.Name != "H201" || len(u.Known) != len(devs) {
		t.Errorf("unknown device: %v; want an UnknownDeviceError naming H201 and the known devices", err)
	}
}
