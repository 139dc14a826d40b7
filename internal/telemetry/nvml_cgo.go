//go:build cgo && linux

package telemetry

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// maxXidsPerRead bounds one read's draining of the event set, so a storm
// of Xids cannot hold the sampler.
const maxXidsPerRead = 64

// openNVML loads the driver's libnvidia-ml at run time (go-nvml dlopens
// it), so the binary starts on machines without it.
func openNVML() (nvmlLib, error) {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, nvmlInitReason(ret)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("NVML could not count the GPUs: %v", ret)
	}
	ext := lib.Extensions()
	// go-nvml links NVML's symbols lazily: calling one an older driver
	// lacks would abort the process, so look the newer ones up first.
	memV2 := ext.LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil
	eventReasons := ext.LookupSymbol("nvmlDeviceGetCurrentClocksEventReasons") == nil
	l := &nvmlBinding{lib: lib}
	for i := range n {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("NVML could not open GPU %d: %v", i, ret)
		}
		l.devs = append(l.devs, newNVMLDevice(i, d, memV2, eventReasons))
	}
	l.watchXids()
	return l, nil
}

// nvmlInitReason says in words why NVML did not start.
func nvmlInitReason(ret nvml.Return) error {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return errors.New("NVML library libnvidia-ml.so.1 not found (no NVIDIA driver installed)")
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return errors.New("the NVIDIA driver is not loaded")
	case nvml.ERROR_NO_PERMISSION:
		return errors.New("no permission to use the NVIDIA driver")
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return errors.New("NVML and the NVIDIA kernel driver differ in version (reload the driver or reboot)")
	}
	return fmt.Errorf("NVML did not start: %v", ret)
}

type nvmlBinding struct {
	lib  nvml.Interface
	devs []nvmlDevice
	xids nvml.EventSet // nil when no GPU reports Xid events
}

func (l *nvmlBinding) Devices() []nvmlDevice { return l.devs }

func (l *nvmlBinding) DriverVersion() string {
	v, ret := l.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		return ""
	}
	return v
}

// watchXids registers every GPU that supports it for Xid critical errors.
// A GPU that does not (some boards, some containers) just gives none.
func (l *nvmlBinding) watchXids() {
	set, ret := l.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		return
	}
	registered := 0
	for _, d := range l.devs {
		if d.(*nvmlDev).d.RegisterEvents(nvml.EventTypeXidCriticalError, set) == nvml.SUCCESS {
			registered++
		}
	}
	if registered == 0 {
		set.Free()
		return
	}
	l.xids = set
}

// PollXid drains the event set with a zero timeout: it never waits.
func (l *nvmlBinding) PollXid() ([]xidError, error) {
	if l.xids == nil {
		return nil, nil
	}
	var out []xidError
	for range maxXidsPerRead {
		ev, ret := l.xids.Wait(0)
		if ret == nvml.ERROR_TIMEOUT {
			break
		}
		if ret != nvml.SUCCESS {
			return out, nvmlErr(ret)
		}
		if ev.EventType&nvml.EventTypeXidCriticalError == 0 {
			continue
		}
		index, _ := ev.Device.GetIndex()
		out = append(out, xidError{Index: index, Xid: ev.EventData})
	}
	return out, nil
}

func (l *nvmlBinding) Close() error {
	if l.xids != nil {
		l.xids.Free()
	}
	return nvmlErr(l.lib.Shutdown())
}

// nvmlErr maps NVML's return codes to errors: unsupported (by the GPU or,
// for a newer call, by the driver) to errNotSupported.
func nvmlErr(ret nvml.Return) error {
	switch ret {
	case nvml.SUCCESS:
		return nil
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return errNotSupported
	}
	return ret
}
