package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
)

func TestF16(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{65504, 0x7bff},                             // largest finite half
		{65520, 0x7c00},                             // rounds up to infinity
		{1e6, 0x7c00},                               // overflow
		{float32(math.Ldexp(1, -14)), 0x0400},       // smallest normal
		{float32(math.Ldexp(1, -24)), 0x0001},       // smallest subnormal
		{float32(math.Ldexp(1, -26)), 0x0000},       // underflow
		{1 + float32(math.Ldexp(1, -11)), 0x3c00},   // tie rounds to even (down)
		{1 + 3*float32(math.Ldexp(1, -11)), 0x3c02}, // tie rounds to even (up)
		{float32(math.Inf(1)), 0x7c00},
		{float32(math.NaN()), 0x7e00},
	} {
		if got := F16(c.in); got != c.want {
			t.Errorf("F16(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

func TestF16RoundTripsEveryHalf(t *testing.T) {
	for h := range uint32(0x10000) {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN payloads are not kept
		}
		if got := F16(f16ToF32(uint16(h))); got != uint16(h) {
			t.Fatalf("F16(f16ToF32(%#04x)) = %#04x", h, got)
		}
	}
}

func TestQ8_0(t *testing.T) {
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i-20) / 7
	}
	x[40] = 0 // a zero inside a block
	data, err := EncodeQ8_0(x)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 2*34 {
		t.Fatalf("%d bytes, want 68", len(data))
	}
	got, err := decodeQ8_0(data)
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 64; b += 32 {
		var amax float64
		for _, v := range x[b : b+32] {
			amax = max(amax, math.Abs(float64(v)))
		}
		// Error is half a step of the scale, plus the scale's f16 rounding.
		tol := amax/127/2 + amax*1e-3
		for i := b; i < b+32; i++ {
			if d := math.Abs(float64(got[i] - x[i])); d > tol {
				t.Errorf("x[%d] = %g decoded as %g (tolerance %g)", i, x[i], got[i], tol)
			}
		}
	}
	// A block of zeros has scale zero and decodes to zeros.
	zero, _ := EncodeQ8_0(make([]float32, 32))
	for i, v := range zero {
		if v != 0 {
			t.Fatalf("zero block byte %d = %d", i, v)
		}
	}
	if _, err := EncodeQ8_0(make([]float32, 31)); err == nil {
		t.Error("31 values: no error")
	}
}

// f16ToF32 converts IEEE 754 half precision to float32 exactly.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h >> 10 & 0x1f)
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: value is mant × 2^-24.
	v := float32(mant) * float32(math.Ldexp(1, -24))
	if sign != 0 {
		v = -v
	}
	return v
}

// decodeQ8_0 is the inverse of EncodeQ8_0, to check the encoder.
func decodeQ8_0(data []byte) ([]float32, error) {
	if len(data)%q8BlockBytes != 0 {
		return nil, fmt.Errorf("Q8_0: %d bytes is not a whole number of blocks", len(data))
	}
	out := make([]float32, 0, len(data)/q8BlockBytes*Q8Block)
	for b := 0; b < len(data); b += q8BlockBytes {
		d := f16ToF32(binary.LittleEndian.Uint16(data[b:]))
		for _, q := range data[b+2 : b+q8BlockBytes] {
			out = append(out, d*float32(int8(q)))
		}
	}
	return out, nil
}
