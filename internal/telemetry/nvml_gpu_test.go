//go:build gpu && cgo && linux

package telemetry

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// smiQuery is what nvidia-smi is asked: docs/PERFORMANCE.md, "GPU check".
const smiQuery = "index,memory.used,power.draw,temperature.gpu"

// TestNVMLAgainstSMI is the device check (scripts/gpu-check.sh runs it
// while a load runs): for GPU_CHECK_ROUNDS rounds (default 20, 1 s apart)
// it reads NVML, asks nvidia-smi, reads NVML again, and holds nvidia-smi's
// memory, power and temperature to the NVML bracket. Then it compares the
// energy counter's joules with power integrated over the same readings.
//
//	go test -tags gpu -run TestNVMLAgainstSMI -v ./internal/telemetry
func TestNVMLAgainstSMI(t *testing.T) {
	src, err := NewNVML()
	if err != nil {
		t.Fatalf("GPU telemetry unavailable: %v", err)
	}
	defer src.(*nvmlSource).Close()
	rounds := 20
	if n, err := strconv.Atoi(os.Getenv("GPU_CHECK_ROUNDS")); err == nil && n > 1 {
		rounds = n
	}
	start := time.Now()
	read := func() []Sample {
		s, err := src.Read(context.Background(), time.Since(start).Nanoseconds())
		if err != nil {
			t.Errorf("NVML read: %v", err)
		}
		return s
	}
	var all []Sample
	var bad, checked int
	t.Logf("gpu  field            NVML before–after       nvidia-smi")
	for r := range rounds {
		before := read()
		out, err := exec.Command("nvidia-smi", "--query-gpu="+smiQuery, "--format=csv,noheader,nounits").Output()
		if err != nil {
			t.Fatalf("nvidia-smi: %v", err)
		}
		after := read()
		smi, err := parseSMI(string(out))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range smi {
			b, a := gpuOf(before, s.index), gpuOf(after, s.index)
			if b == nil || a == nil {
				t.Errorf("nvidia-smi lists GPU %d, NVML does not", s.index)
				continue
			}
			for _, c := range smiChecks(b, a, s) {
				checked++
				if !c.ok() {
					bad++
				}
				if !c.ok() || r == 0 || r == rounds-1 {
					t.Log(c)
				}
			}
		}
		all = append(append(all, before...), after...)
		time.Sleep(time.Second)
	}
	t.Logf("%d of %d comparisons within tolerance", checked-bad, checked)
	if bad > 0 {
		t.Errorf("%d comparisons out of tolerance", bad)
	}
	checkEnergy(t, all)
}

func gpuOf(samples []Sample, index int) *GPU {
	for _, s := range samples {
		if s.GPU != nil && s.GPU.Index == index {
			return s.GPU
		}
	}
	return nil
}

// checkEnergy summarises the readings twice, with the energy counter and
// with power alone (the trapezoid), and wants the two within 15% or 20 J:
// both methods summarizeGPUs uses, on the same span of real readings.
func checkEnergy(t *testing.T, all []Sample) {
	w := Window{From: all[0].TNS, To: all[len(all)-1].TNS, Scale: 1, Samples: all}
	var powerOnly []Sample
	for _, s := range all {
		if s.GPU != nil {
			g := *s.GPU
			g.EnergyJ = nil
			s.GPU = &g
		}
		powerOnly = append(powerOnly, s)
	}
	counter := summarizeGPUs(w)
	w.Samples = powerOnly
	integrated := summarizeGPUs(w)
	for i, p := range counter {
		if p.EnergyJ == nil || integrated[i].EnergyJ == nil {
			t.Logf("GPU %d: no energy counter or no power: energy not compared", p.Index)
			continue
		}
		c, tr := *p.EnergyJ, *integrated[i].EnergyJ
		t.Logf("GPU %d: energy %.1f J by the counter, %.1f J by power (trapezoid), over %.1f s; throttled %v s",
			p.Index, c, tr, float64(w.To-w.From)/1e9, deref(p.ThrottleS))
		if math.Abs(c-tr) > max(20, 0.15*c) {
			t.Errorf("GPU %d: the counter's %.1f J and integrated power's %.1f J differ by more than 15%%", p.Index, c, tr)
		}
	}
}

func deref(v *float64) any {
	if v == nil {
		return "unknown"
	}
	return *v
}
