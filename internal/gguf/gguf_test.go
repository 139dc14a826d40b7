package gguf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	parser "github.com/gpustack/gguf-parser-go"
)

// writeAndParse writes f to a temporary file and reads it back with an
// independent GGUF reader.
func writeAndParse(t *testing.T, f *File) (*parser.GGUFFile, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.WriteTo(out)
	if err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	gf, err := parser.ParseGGUFFile(path)
	if err != nil {
		t.Fatalf("parse back: %v", err)
	}
	return gf, n
}

func TestWriteMetadataRoundTrip(t *testing.T) {
	f := &File{
		KV: []KV{
			{"u8", uint8(200)}, {"i8", int8(-5)}, {"u16", uint16(60000)}, {"i16", int16(-300)},
			{"u32", uint32(1 << 31)}, {"i32", int32(-70000)}, {"f32", float32(1.5)},
			{"bool", true}, {"str", "héllo"}, {"u64", uint64(1 << 40)}, {"i64", int64(-1 << 40)},
			{"f64", 2.25}, {"strs", []string{"a", "", "▁the"}}, {"f32s", []float32{0.5, -1}},
			{"i32s", []int32{1, -2, 3}}, {"u8s", []uint8{}},
		},
		Tensors: []Tensor{
			{Name: "a", Shape: []uint64{3}, Type: TypeF32, Data: EncodeF32([]float32{1, 2, 3})},
			{Name: "b", Shape: []uint64{32, 2}, Type: TypeQ8_0, Data: make([]byte, 68)},
		},
	}
	gf, n := writeAndParse(t, f)
	if got := int64(gf.Size); got != n {
		t.Errorf("file size %d, WriteTo reported %d", got, n)
	}
	h := gf.Header
	if h.Magic != parser.GGUFMagicGGUFLe || h.Version != parser.GGUFVersionV3 {
		t.Errorf("magic %v version %v", h.Magic, h.Version)
	}
	if h.MetadataKVCount != uint64(len(f.KV)) || h.TensorCount != 2 {
		t.Errorf("counts: kv %d tensors %d", h.MetadataKVCount, h.TensorCount)
	}
	get := func(k string) parser.GGUFMetadataKV {
		kv, ok := h.MetadataKV.Get(k)
		if !ok {
			t.Fatalf("key %q missing", k)
		}
		return kv
	}
	for _, c := range []struct {
		key       string
		got, want any
	}{
		{"u8", get("u8").ValueUint8(), uint8(200)},
		{"i8", get("i8").ValueInt8(), int8(-5)},
		{"u16", get("u16").ValueUint16(), uint16(60000)},
		{"i16", get("i16").ValueInt16(), int16(-300)},
		{"u32", get("u32").ValueUint32(), uint32(1 << 31)},
		{"i32", get("i32").ValueInt32(), int32(-70000)},
		{"f32", get("f32").ValueFloat32(), float32(1.5)},
		{"bool", get("bool").ValueBool(), true},
		{"str", get("str").ValueString(), "héllo"},
		{"u64", get("u64").ValueUint64(), uint64(1 << 40)},
		{"i64", get("i64").ValueInt64(), int64(-1 << 40)},
		{"f64", get("f64").ValueFloat64(), 2.25},
		{"strs", strings.Join(get("strs").ValueArray().ValuesString(), "|"), "a||▁the"},
		{"f32s", get("f32s").ValueArray().ValuesFloat32()[1], float32(-1)},
		{"i32s", get("i32s").ValueArray().ValuesInt32()[1], int32(-2)},
		{"u8s len", get("u8s").ValueArray().Len, uint64(0)},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.key, c.got, c.want)
		}
	}
	// Offsets are relative to the data section and aligned: "a" holds 12
	// bytes, so "b" starts at the next multiple of 32.
	if gf.TensorInfos[0].Offset != 0 || gf.TensorInfos[1].Offset != 32 {
		t.Errorf("offsets %d, %d; want 0, 32", gf.TensorInfos[0].Offset, gf.TensorInfos[1].Offset)
	}
	if gf.TensorDataStartOffset%DefaultAlignment != 0 {
		t.Errorf("data section starts at %d, not aligned", gf.TensorDataStartOffset)
	}
}

func TestWriteRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		f    File
		want string
	}{
		// Data shorter than the shape needs.
		{"size", File{Tensors: []Tensor{{Name: "x", Shape: []uint64{4}, Type: TypeF32, Data: make([]byte, 8)}}}, "needs 16"},
		// Q8_0 rows must hold whole blocks.
		{"q8 row", File{Tensors: []Tensor{{Name: "x", Shape: []uint64{16}, Type: TypeQ8_0}}}, "multiple of 32"},
		// Two tensors of one name would make a reader pick one silently.
		{"dup", File{Tensors: []Tensor{
			{Name: "x", Shape: []uint64{1}, Type: TypeF32, Data: make([]byte, 4)},
			{Name: "x", Shape: []uint64{1}, Type: TypeF32, Data: make([]byte, 4)},
		}}, "twice"},
		// A metadata value of a type GGUF cannot hold.
		{"kv type", File{KV: []KV{{"k", 3}}}, "unsupported value type int"},
		{"align", File{Alignment: 24}, "power of two"},
	} {
		_, err := c.f.WriteTo(&bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestWriteLayoutBytes(t *testing.T) {
	// The smallest file, byte for byte: header, one KV, no tensors.
	f := &File{KV: []KV{{"k", uint32(7)}}}
	var b bytes.Buffer
	if _, err := f.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	want := binary.LittleEndian.AppendUint32(nil, Magic)
	want = binary.LittleEndian.AppendUint32(want, 3)
	want = binary.LittleEndian.AppendUint64(want, 0)
	want = binary.LittleEndian.AppendUint64(want, 1)
	want = binary.LittleEndian.AppendUint64(want, 1)
	want = append(want, 'k')
	want = binary.LittleEndian.AppendUint32(want, uint32(TypeUint32))
	want = binary.LittleEndian.AppendUint32(want, 7)
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("got % x\nwant % x", b.Bytes(), want)
	}
	if string(b.Bytes()[:4]) != "GGUF" {
		t.Errorf("magic bytes %q", b.Bytes()[:4])
	}
}
