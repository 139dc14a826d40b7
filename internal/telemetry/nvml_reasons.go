package telemetry

import (
	"fmt"
	"slices"
)

// clockReasons names NVML's clock event (formerly "throttle") reason bits,
// nvmlClocksEventReason* in nvml.h. DCGM's
// DCGM_FI_DEV_CLOCK_THROTTLE_REASONS is the same mask.
var clockReasons = []struct {
	bit  uint64
	name string
}{
	{0x1, "idle"},
	{0x2, "applications_clocks"},
	{0x4, "power_cap"},
	{0x8, "hw_slowdown"},
	{0x10, "sync_boost"},
	{0x20, "sw_thermal"},
	{0x40, "hw_thermal"},
	{0x80, "hw_power_brake"},
	{0x100, "display_clocks"},
	{0x200, "board_limit"},
	{0x400, "reliability"},
}

// settingReasons are reasons that are a setting or an idle GPU lowering
// its clocks, not a limit the hardware imposed under load: an idle GPU
// always reports idle, and data-centre GPUs routinely run at their
// applications clocks. They stay in the samples but count as no throttling.
var settingReasons = map[string]bool{
	"idle":                true,
	"applications_clocks": true,
	"display_clocks":      true,
}

// clockReasonNames decodes a clock event reason mask to reason names, in
// bit order; a bit NVML may add later is kept as "bit_0x...". A zero mask
// gives an empty, non-nil slice: the clocks run free (nil means unknown).
func clockReasonNames(mask uint64) []string {
	names := []string{}
	for _, r := range clockReasons {
		if mask&r.bit != 0 {
			names = append(names, r.name)
			mask &^= r.bit
		}
	}
	for bit := uint64(1); mask != 0; bit <<= 1 {
		if mask&bit != 0 {
			names = append(names, fmt.Sprintf("bit_%#x", bit))
			mask &^= bit
		}
	}
	return names
}

// limitingReasons keeps the reasons that lower clocks under load.
func limitingReasons(reasons []string) []string {
	var out []string
	for _, r := range reasons {
		if !settingReasons[r] {
			out = append(out, r)
		}
	}
	return out
}

// throttleBegins returns the limiting reasons of cur that prev lacked:
// what a throttle event reports when throttling begins or a new limit
// joins it.
func throttleBegins(prev, cur []string) []string {
	var out []string
	for _, r := range limitingReasons(cur) {
		if !slices.Contains(prev, r) {
			out = append(out, r)
		}
	}
	return out
}

// xidMeanings are the Xids an inference server is likely to meet, from
// NVIDIA's Xid catalogue; others are reported by number alone.
var xidMeanings = map[uint64]string{
	13:  "graphics engine exception (a kernel faulted)",
	31:  "GPU memory page fault (a kernel used an invalid address)",
	43:  "GPU stopped processing (the application faulted)",
	45:  "preemptive cleanup after earlier errors",
	48:  "double-bit ECC memory error",
	61:  "internal micro-controller breakpoint",
	62:  "internal micro-controller halt",
	63:  "ECC page retirement or row remapping recorded",
	64:  "ECC page retirement or row remapping failed",
	74:  "NVLink error",
	79:  "GPU has fallen off the bus",
	92:  "high single-bit ECC error rate",
	94:  "contained ECC memory error",
	95:  "uncontained ECC memory error",
	119: "GSP RPC timeout",
	120: "GSP error",
}

// xidEvent is the event an Xid becomes. Every Xid is kind xid, none oom:
// a CUDA out-of-memory is an allocation the driver refuses and returns to
// the process (the engine's error text says it); it raises no Xid. The
// memory Xids (31, 48, 63, 64, 94, 95) are faults of the memory or of a
// kernel's addressing, and counting them as oom would send a user to
// shrink batches when the hardware or the engine is at fault.
func xidEvent(instance string, index int, xid uint64) *Event {
	detail := fmt.Sprintf("GPU %d: Xid %d", index, xid)
	if m, ok := xidMeanings[xid]; ok {
		detail += ": " + m
	}
	return &Event{Kind: EventXid, Source: instance, Detail: detail}
}
