//go:build cgo && linux

package telemetry

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// nvmlDev is one GPU's handle with its identity and which of NVML's
// newer calls the driver has.
type nvmlDev struct {
	d            nvml.Device
	index        int
	name, uuid   string
	memV2        bool // nvmlDeviceGetMemoryInfo_v2: used excludes reserved memory, as nvidia-smi shows it
	eventReasons bool // nvmlDeviceGetCurrentClocksEventReasons, the throttle reasons' newer name
}

func newNVMLDevice(index int, d nvml.Device, memV2, eventReasons bool) *nvmlDev {
	name, _ := d.GetName()
	uuid, _ := d.GetUUID()
	return &nvmlDev{d: d, index: index, name: name, uuid: uuid, memV2: memV2, eventReasons: eventReasons}
}

func (d *nvmlDev) Identity() (int, string, string) { return d.index, d.name, d.uuid }

func (d *nvmlDev) Memory() (used, total uint64, err error) {
	if d.memV2 {
		m, ret := d.d.GetMemoryInfo_v2()
		if ret == nvml.SUCCESS {
			return m.Used, m.Total, nil
		}
	}
	m, ret := d.d.GetMemoryInfo()
	return m.Used, m.Total, nvmlErr(ret)
}

func (d *nvmlDev) Utilization() (uint32, error) {
	u, ret := d.d.GetUtilizationRates()
	return u.Gpu, nvmlErr(ret)
}

func (d *nvmlDev) PowerMW() (uint32, error) {
	mw, ret := d.d.GetPowerUsage()
	return mw, nvmlErr(ret)
}

func (d *nvmlDev) EnergyMJ() (uint64, error) {
	mj, ret := d.d.GetTotalEnergyConsumption()
	return mj, nvmlErr(ret)
}

func (d *nvmlDev) TemperatureC() (uint32, error) {
	c, ret := d.d.GetTemperature(nvml.TEMPERATURE_GPU)
	return c, nvmlErr(ret)
}

func (d *nvmlDev) SMClockMHz() (uint32, error) {
	mhz, ret := d.d.GetClockInfo(nvml.CLOCK_SM)
	return mhz, nvmlErr(ret)
}

func (d *nvmlDev) ClockReasons() (uint64, error) {
	if d.eventReasons {
		mask, ret := d.d.GetCurrentClocksEventReasons()
		return mask, nvmlErr(ret)
	}
	mask, ret := d.d.GetCurrentClocksThrottleReasons()
	return mask, nvmlErr(ret)
}
