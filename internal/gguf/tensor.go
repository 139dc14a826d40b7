package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// TensorType is a ggml tensor type. Only the types servebench writes are
// named; the numbers are ggml's.
type TensorType uint32

// Tensor types, numbered as in ggml.h.
const (
	TypeF32  TensorType = 0
	TypeF16  TensorType = 1
	TypeQ8_0 TensorType = 8
)

// Q8Block is the number of weights in one Q8_0 block; a block is stored as
// an f16 scale followed by that many int8 values.
const Q8Block = 32

const q8BlockBytes = 2 + Q8Block

func (t TensorType) String() string {
	switch t {
	case TypeF32:
		return "F32"
	case TypeF16:
		return "F16"
	case TypeQ8_0:
		return "Q8_0"
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Bytes is the encoded size of a tensor of this type and shape.
func (t TensorType) Bytes(shape []uint64) (uint64, error) {
	if len(shape) == 0 || len(shape) > 4 {
		return 0, fmt.Errorf("shape %v: want 1 to 4 dimensions", shape)
	}
	n := uint64(1)
	for _, d := range shape {
		if d == 0 {
			return 0, fmt.Errorf("shape %v has a zero dimension", shape)
		}
		n *= d
	}
	switch t {
	case TypeF32:
		return 4 * n, nil
	case TypeF16:
		return 2 * n, nil
	case TypeQ8_0:
		if shape[0]%Q8Block != 0 {
			return 0, fmt.Errorf("Q8_0 rows must be a multiple of %d long, shape %v", Q8Block, shape)
		}
		return n / Q8Block * q8BlockBytes, nil
	}
	return 0, fmt.Errorf("unsupported tensor type %s", t)
}

// EncodeF32 encodes values as little-endian float32.
func EncodeF32(x []float32) []byte {
	out := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return out
}

// EncodeQ8_0 quantizes values into Q8_0 blocks the way ggml's reference
// quantize_row_q8_0 does: scale d = max|x|/127 stored as f16, q = round(x/d).
// len(x) must be a multiple of Q8Block.
func EncodeQ8_0(x []float32) ([]byte, error) {
	if len(x)%Q8Block != 0 {
		return nil, fmt.Errorf("Q8_0: %d values is not a multiple of %d", len(x), Q8Block)
	}
	out := make([]byte, 0, len(x)/Q8Block*q8BlockBytes)
	for b := 0; b < len(x); b += Q8Block {
		block := x[b : b+Q8Block]
		var amax float32
		for _, v := range block {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		var inv float32
		if d != 0 {
			inv = 1 / d
		}
		out = binary.LittleEndian.AppendUint16(out, F16(d))
		for _, v := range block {
			out = append(out, byte(int8(math.Round(float64(v*inv)))))
		}
	}
	return out, nil
}

// F16 converts a float32 to IEEE 754 half precision, rounding to nearest
// even; overflow becomes infinity and tiny values become subnormals or zero.
func F16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case b>>23&0xff == 0xff: // inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		// Subnormal: shift the mantissa, with its implicit bit, into place.
		m := mant | 0x800000
		shift := uint32(14 - exp)
		return sign | uint16(roundShift(m, shift))
	}
	// The carry of rounding may bump the exponent, which is still correct.
	return sign | uint16(uint32(exp)<<10+roundShift(mant, 13))
}

// roundShift returns m >> s rounded to nearest, ties to even.
func roundShift(m, s uint32) uint32 {
	q := m >> s
	rem := m & (1<<s - 1)
	half := uint32(1) << (s - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return q
}
