package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// marshal is encoding/json's encoding of v, HTML escaping as asked.
func marshal(t *testing.T, v any, html bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var texts = []string{
	"", "plain words", `"quoted" \back\slash/`, "\b\f\n\r\t\x00\x01\x1f\x7f",
	"<b>&amp;</b>", "é漢字😀", "\u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82", "\xed\xa0\x80 surrogate",
}

func TestString(t *testing.T) {
	for _, s := range texts {
		for _, html := range []bool{false, true} {
			if got, want := String(nil, s, html), marshal(t, s, html); !bytes.Equal(got, want) {
				t.Errorf("String(%q, html %v) = %s, want %s", s, html, got, want)
			}
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range texts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{false, true} {
			if got, want := String([]byte("x"), s, html), append([]byte("x"), marshal(t, s, html)...); !bytes.Equal(got, want) {
				t.Fatalf("String(%q, html %v) = %s, want %s", s, html, got, want)
			}
		}
	})
}

var floats = []float64{0, math.Copysign(0, -1), 1, -2.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 1e20, 1e21, 123456789e15,
	-1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3, 2.0 / 3 * 1e-8}

func TestFloat(t *testing.T) {
	for _, x := range floats {
		got, err := Float(nil, x)
		if want := marshal(t, x, false); err != nil || !bytes.Equal(got, want) {
			t.Errorf("Float(%v) = %s, %v; want %s", x, got, err, want)
		}
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := Float(nil, x); err == nil {
			t.Errorf("Float(%v): no error; encoding/json has none for it", x)
		}
		if _, err := json.Marshal(x); err == nil {
			t.Fatalf("encoding/json encodes %v", x)
		}
	}
}

func FuzzFloat(f *testing.F) {
	for _, x := range floats {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		got, err := Float(nil, x)
		want, werr := json.Marshal(x)
		if (err != nil) != (werr != nil) || err == nil && !bytes.Equal(got, want) {
			t.Fatalf("Float(%v) = %s, %v; encoding/json %s, %v", x, got, err, want, werr)
		}
	})
}

// BenchmarkString: a synthesised prompt's text, 512 common words.
func BenchmarkString(b *testing.B) {
	var words []byte
	for i := 0; len(words) < 3500; i++ {
		words = append(words, " the quick brown fox jumps over lazy dogs"[i%41])
	}
	s := string(words)
	buf := make([]byte, 0, 8192)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = String(buf[:0], s, true)
	}
}
