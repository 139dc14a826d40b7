package telemetry

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The comparison TestNVMLAgainstSMI (nvml_gpu_test.go, build tag gpu)
// makes, kept untagged so that its parsing and tolerances are tested on
// every machine.

// smiReading is one GPU's line of nvidia-smi --format=csv,noheader,nounits.
type smiReading struct {
	index         int
	memMiB, power float64
	temp          float64
	hasPower      bool // false when the board reports power as [N/A]
}

func parseSMI(out string) ([]smiReading, error) {
	var rs []smiReading
	for line := range strings.Lines(out) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) != 4 {
			return nil, fmt.Errorf("nvidia-smi line %q: want %d fields", line, 4)
		}
		var r smiReading
		var errs [4]error
		r.index, errs[0] = strconv.Atoi(strings.TrimSpace(f[0]))
		r.memMiB, errs[1] = strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
		r.power, errs[2] = strconv.ParseFloat(strings.TrimSpace(f[2]), 64)
		r.temp, errs[3] = strconv.ParseFloat(strings.TrimSpace(f[3]), 64)
		r.hasPower = errs[2] == nil
		if errs[0] != nil || errs[1] != nil || errs[3] != nil {
			return nil, fmt.Errorf("nvidia-smi line %q: not numbers", line)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// smiCheck is one field of one GPU: nvidia-smi's value against the two
// NVML readings taken just before and after it.
type smiCheck struct {
	gpu            int
	field, unit    string
	lo, hi, smi    float64
	tolAbs, tolRel float64
}

// ok: nvidia-smi's value lies within the NVML bracket widened by the
// larger of the absolute and the relative tolerance.
func (c smiCheck) ok() bool {
	tol := max(c.tolAbs, c.tolRel*max(c.hi, c.smi))
	return c.smi >= c.lo-tol && c.smi <= c.hi+tol
}

// smiChecks pairs one GPU's NVML readings (before, after) with nvidia-smi's.
// Tolerances: memory 64 MiB (nvidia-smi rounds to MiB; allocations move
// between the reads); power 10 W or 10% (both average over about a second,
// not the same second); temperature 2 °C.
func smiChecks(before, after *GPU, s smiReading) []smiCheck {
	var out []smiCheck
	add := func(field, unit string, a, b *float64, scale, smi, tolAbs, tolRel float64) {
		if a == nil || b == nil {
			return
		}
		out = append(out, smiCheck{gpu: s.index, field: field, unit: unit,
			lo: min(*a, *b) * scale, hi: max(*a, *b) * scale, smi: smi, tolAbs: tolAbs, tolRel: tolRel})
	}
	add("memory.used", "MiB", before.MemoryUsedBytes, after.MemoryUsedBytes, 1.0/(1<<20), s.memMiB, 64, 0)
	if s.hasPower {
		add("power.draw", "W", before.PowerW, after.PowerW, 1, s.power, 10, 0.10)
	}
	add("temperature.gpu", "C", before.TemperatureC, after.TemperatureC, 1, s.temp, 2, 0)
	return out
}

func (c smiCheck) String() string {
	verdict := "ok"
	if !c.ok() {
		verdict = "OUT OF TOLERANCE"
	}
	return fmt.Sprintf("%3d  %-16s %10.1f–%-10.1f %10.1f %-4s %s", c.gpu, c.field, c.lo, c.hi, c.smi, c.unit, verdict)
}

// TestSMIParseAndTolerance holds the device check's own logic to known
// nvidia-smi output, so that it is right before it first meets a GPU.
func TestSMIParseAndTolerance(t *testing.T) {
	out := "0, 1024, 71.25, 40\n1, 80000, [N/A], 35\n"
	rs, err := parseSMI(out)
	if err != nil || len(rs) != 2 {
		t.Fatalf("parse: %v, %d readings", err, len(rs))
	}
	if rs[0].memMiB != 1024 || rs[0].power != 71.25 || !rs[0].hasPower || rs[0].temp != 40 || rs[1].hasPower {
		t.Errorf("readings %+v", rs)
	}
	if _, err := parseSMI("0, 1024, 70\n"); err == nil {
		t.Error("a line with three fields parsed")
	}
	gpu := func(mib, w, c float64) *GPU {
		return &GPU{MemoryUsedBytes: new(mib * (1 << 20)), PowerW: new(w), TemperatureC: new(c)}
	}
	for _, c := range []struct {
		name                   string
		smi                    smiReading
		memOK, powerOK, tempOK bool
	}{
		{"agree", smiReading{memMiB: 1030, power: 75, hasPower: true, temp: 41}, true, true, true},
		{"memory off by 100 MiB", smiReading{memMiB: 1200, power: 75, hasPower: true, temp: 41}, false, true, true},
		{"power 20% high", smiReading{memMiB: 1024, power: 96, hasPower: true, temp: 41}, true, false, true},
		{"3 °C hotter", smiReading{memMiB: 1024, power: 75, hasPower: true, temp: 45}, true, true, false},
	} {
		checks := smiChecks(gpu(1000, 70, 40), gpu(1050, 80, 42), c.smi)
		if len(checks) != 3 {
			t.Fatalf("%s: %d checks", c.name, len(checks))
		}
		got := [3]bool{checks[0].ok(), checks[1].ok(), checks[2].ok()}
		if want := [3]bool{c.memOK, c.powerOK, c.tempOK}; got != want {
			t.Errorf("%s: ok %v, want %v\n%v", c.name, got, want, checks)
		}
	}
}
