// Package gguf writes GGUF v3 files: the model format of llama.cpp and Ollama.
// servebench uses it to make its own small random-weight models, so that a
// real inference engine can be tested without downloading one.
//
// The format (ggml's docs/gguf.md): a header (magic, version, tensor count,
// metadata count), the metadata key-value pairs, the tensor infos, padding to
// the alignment, then each tensor's data, each padded to the alignment.
// Everything is little-endian.
package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Magic is "GGUF" read as a little-endian uint32.
const Magic uint32 = 0x46554747

// Version is the GGUF version this package writes.
const Version uint32 = 3

// DefaultAlignment is the alignment readers assume when general.alignment is
// absent; llama.cpp mmaps tensor data, so offsets must honour it.
const DefaultAlignment = 32

// ValueType is the type tag of a metadata value.
type ValueType uint32

// Metadata value types, numbered as in the GGUF specification.
const (
	TypeUint8 ValueType = iota
	TypeInt8
	TypeUint16
	TypeInt16
	TypeUint32
	TypeInt32
	TypeFloat32
	TypeBool
	TypeString
	TypeArray
	TypeUint64
	TypeInt64
	TypeFloat64
)

// KV is one metadata pair. Value is a Go scalar of a GGUF type (uint8 …
// float64, bool, string) or a slice of one of them, written as an array.
type KV struct {
	Key   string
	Value any
}

// Tensor is one named tensor. Shape is in ggml order: Shape[0] is the length
// of a row (the contiguous dimension). Data is the encoded bytes, whose
// length must match Shape and Type.
type Tensor struct {
	Name  string
	Shape []uint64
	Type  TensorType
	Data  []byte
}

// File is a whole GGUF file in memory. Alignment 0 means DefaultAlignment;
// any other value must also be written as general.alignment by the caller.
type File struct {
	KV        []KV
	Tensors   []Tensor
	Alignment uint64
}

// WriteTo writes f in GGUF v3 and returns the number of bytes written.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	align := f.Alignment
	if align == 0 {
		align = DefaultAlignment
	}
	offsets, err := f.layout(align)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	e := &encoder{w: cw}
	e.u32(Magic)
	e.u32(Version)
	e.u64(uint64(len(f.Tensors)))
	e.u64(uint64(len(f.KV)))
	for _, kv := range f.KV {
		e.str(kv.Key)
		if err := e.value(kv.Value, true); err != nil {
			return cw.n, fmt.Errorf("gguf: metadata %q: %w", kv.Key, err)
		}
	}
	for i, t := range f.Tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(offsets[i])
	}
	for _, t := range f.Tensors {
		e.pad(align)
		e.bytes(t.Data)
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	return cw.n, e.err
}

// layout checks every tensor and returns its data offset, relative to the
// start of the data section.
func (f *File) layout(align uint64) ([]uint64, error) {
	if align&(align-1) != 0 {
		return nil, fmt.Errorf("gguf: alignment %d is not a power of two", align)
	}
	offsets := make([]uint64, len(f.Tensors))
	seen := make(map[string]bool, len(f.Tensors))
	var off uint64
	for i, t := range f.Tensors {
		if seen[t.Name] {
			return nil, fmt.Errorf("gguf: tensor %q appears twice", t.Name)
		}
		seen[t.Name] = true
		want, err := t.Type.Bytes(t.Shape)
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %q: %w", t.Name, err)
		}
		if uint64(len(t.Data)) != want {
			return nil, fmt.Errorf("gguf: tensor %q: %d data bytes, shape %v of %s needs %d",
				t.Name, len(t.Data), t.Shape, t.Type, want)
		}
		offsets[i] = off
		off = alignUp(off+want, align)
	}
	return offsets, nil
}

func alignUp(n, align uint64) uint64 { return (n + align - 1) / align * align }

// countWriter counts bytes so that padding can be computed from the position.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// encoder writes little-endian values and keeps the first error, so that a
// long run of writes is checked once (as bufio.Writer does).
type encoder struct {
	w   *countWriter
	err error
	buf [8]byte
}

func (e *encoder) bytes(p []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(p)
	}
}

func (e *encoder) u8(v uint8)   { e.bytes([]byte{v}) }
func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:], v); e.bytes(e.buf[:2]) }
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:], v); e.bytes(e.buf[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:], v); e.bytes(e.buf[:8]) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.bytes([]byte(s)) }

func (e *encoder) pad(align uint64) {
	if n := alignUp(uint64(e.w.n), align) - uint64(e.w.n); n > 0 {
		e.bytes(make([]byte, n))
	}
}

// value writes v's type tag (when tagged) and its encoding. Array elements
// are written untagged: the array carries one type for all of them.
func (e *encoder) value(v any, tagged bool) error {
	t, err := typeOf(v)
	if err != nil {
		return err
	}
	if tagged {
		e.u32(uint32(t))
	}
	switch v := v.(type) {
	case uint8:
		e.u8(v)
	case int8:
		e.u8(uint8(v))
	case uint16:
		e.u16(v)
	case int16:
		e.u16(uint16(v))
	case uint32:
		e.u32(v)
	case int32:
		e.u32(uint32(v))
	case float32:
		e.u32(math.Float32bits(v))
	case bool:
		e.u8(boolByte(v))
	case string:
		e.str(v)
	case uint64:
		e.u64(v)
	case int64:
		e.u64(uint64(v))
	case float64:
		e.u64(math.Float64bits(v))
	default:
		return e.array(v)
	}
	return nil
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// array writes a slice as element type, count, then the elements.
func (e *encoder) array(v any) error {
	switch v := v.(type) {
	case []uint8:
		return writeArray(e, TypeUint8, v)
	case []int8:
		return writeArray(e, TypeInt8, v)
	case []uint16:
		return writeArray(e, TypeUint16, v)
	case []int16:
		return writeArray(e, TypeInt16, v)
	case []uint32:
		return writeArray(e, TypeUint32, v)
	case []int32:
		return writeArray(e, TypeInt32, v)
	case []float32:
		return writeArray(e, TypeFloat32, v)
	case []bool:
		return writeArray(e, TypeBool, v)
	case []string:
		return writeArray(e, TypeString, v)
	case []uint64:
		return writeArray(e, TypeUint64, v)
	case []int64:
		return writeArray(e, TypeInt64, v)
	case []float64:
		return writeArray(e, TypeFloat64, v)
	}
	return fmt.Errorf("unsupported value type %T", v)
}

func writeArray[T any](e *encoder, t ValueType, v []T) error {
	e.u32(uint32(t))
	e.u64(uint64(len(v)))
	for _, x := range v {
		if err := e.value(x, false); err != nil {
			return err
		}
	}
	return nil
}

// typeOf maps a Go value to its GGUF type tag.
func typeOf(v any) (ValueType, error) {
	switch v.(type) {
	case uint8:
		return TypeUint8, nil
	case int8:
		return TypeInt8, nil
	case uint16:
		return TypeUint16, nil
	case int16:
		return TypeInt16, nil
	case uint32:
		return TypeUint32, nil
	case int32:
		return TypeInt32, nil
	case float32:
		return TypeFloat32, nil
	case bool:
		return TypeBool, nil
	case string:
		return TypeString, nil
	case uint64:
		return TypeUint64, nil
	case int64:
		return TypeInt64, nil
	case float64:
		return TypeFloat64, nil
	case []uint8, []int8, []uint16, []int16, []uint32, []int32, []float32,
		[]bool, []string, []uint64, []int64, []float64:
		return TypeArray, nil
	}
	return 0, fmt.Errorf("unsupported value type %T", v)
}

// WriteFile writes the file at path through a temporary file and renames
// it, so a reader (or a script checking whether the model exists) never
// sees half a file. It returns the bytes written.
func (f *File) WriteFile(path string) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".gguf-*")
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	n, err := f.WriteTo(tmp)
	if err == nil {
		err = tmp.Chmod(0o644) // CreateTemp's 0600 would hide the model from an engine run as another user
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	return n, nil
}
