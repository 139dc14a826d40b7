package yamlfield

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

type inner struct {
	Slots int     `yaml:"slots"`
	Share float64 `yaml:"share"`
}

type doc struct {
	Name  string        `yaml:"name"`
	Seed  int64         `yaml:"seed"`
	On    bool          `yaml:"on"`
	Wait  time.Duration `yaml:"wait"`
	Sizes []int         `yaml:"sizes"`
	Inner inner         `yaml:"inner"`
	Skip  string        // no tag: not a field of the file
}

func decode(t *testing.T, text string, dst *doc) (*Decoder, error) {
	t.Helper()
	d := NewDecoder("doc")
	root, err := d.Root([]byte(text))
	if err != nil || root == nil {
		return d, err
	}
	return d, d.Struct(dst, nil)(root, "")
}

// TestStruct: fields decode by their yaml tags over the values already
// there, and a single value is a one-item list.
func TestStruct(t *testing.T) {
	got := doc{Name: "default", Inner: inner{Slots: 8, Share: 0.5}}
	_, err := decode(t, "name: 64\nseed: 9000000000\non: true\nwait: 150ms\nsizes: 3\ninner:\n  share: 0.9\n", &got)
	if err != nil {
		t.Fatal(err)
	}
	want := doc{Name: "64", Seed: 9e9, On: true, Wait: 150 * time.Millisecond, Sizes: []int{3}, Inner: inner{Slots: 8, Share: 0.9}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestErrors: each error names the field's dotted path and its line.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		field, msg string
		line       int
	}{
		{"unknown field", "name: x\ninner:\n  slot: 4\n", "inner.slot", "unknown field (known: share, slots)", 3},
		{"given twice", "name: x\nname: y\n", "name", "given twice", 2},
		{"float for int", "inner:\n  slots: 1.5\n", "inner.slots", `want a whole number, got "1.5"`, 2},
		{"quoted int", "inner:\n  slots: \"4\"\n", "inner.slots", "want a whole number", 2},
		{"text for number", "inner: {share: lots}\n", "inner.share", `want a number, got "lots"`, 1},
		{"infinite number", "inner: {share: .inf}\n", "inner.share", "want a number", 1},
		{"yes for bool", "on: yes\n", "on", `want true or false, got "yes"`, 1},
		{"bad duration", "wait: soon\n", "wait", "want a duration such as 2s", 1},
		{"list item", "sizes:\n  - 1\n  - two\n", "sizes[1]", "want a whole number", 3},
		{"mapping for value", "seed: {a: 1}\n", "seed", "want a whole number, got a mapping", 1},
		{"list for section", "inner: [1, 2]\n", "inner", "want a mapping of fields, got a list", 1},
		{"null value", "name:\n", "name", "want text, got nothing", 1},
		{"top level list", "- 1\n", "doc", "want a mapping of fields", 1},
		{"syntax", "name: x\n  bad: [\n", "doc", "invalid YAML", 2},
	}
	for _, tt := range tests {
		var d doc
		_, err := decode(t, tt.yaml, &d)
		var fe *Error
		if !errors.As(err, &fe) || fe.Field != tt.field || fe.Line != tt.line || !strings.Contains(fe.Msg, tt.msg) {
			t.Errorf("%s: got %v, want line %d: %s: %s", tt.name, err, tt.line, tt.field, tt.msg)
		}
	}
}

// TestLine: a field found invalid later points at its own line, or at
// its nearest enclosing field's.
func TestLine(t *testing.T) {
	var x doc
	d, err := decode(t, "name: x\nsizes:\n  - 1\n  - 2\ninner:\n  slots: 4\n", &x)
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]int{"name": 1, "sizes[1]": 4, "inner.slots": 6, "inner.share": 5, "other": 1} {
		if got := d.Line(field); got != want {
			t.Errorf("Line(%q) = %d, want %d", field, got, want)
		}
	}
}

// TestHook: a hook decodes the field it names instead of the tag.
func TestHook(t *testing.T) {
	var x doc
	d := NewDecoder("doc")
	root, _ := d.Root([]byte("name: shout\n"))
	err := d.Struct(&x, map[string]Field{"name": func(n *yaml.Node, p string) error {
		x.Name = strings.ToUpper(n.Value)
		return nil
	}})(root, "")
	if err != nil || x.Name != "SHOUT" {
		t.Errorf("got %q, %v", x.Name, err)
	}
}

// TestEmpty: an empty document has no root, and is no error.
func TestEmpty(t *testing.T) {
	for _, text := range []string{"", "# only a comment\n"} {
		root, err := NewDecoder("doc").Root([]byte(text))
		if root != nil || err != nil {
			t.Errorf("%q: root %v, err %v", text, root, err)
		}
	}
}

// FuzzStruct: any input decodes or fails with an *Error; none panics.
func FuzzStruct(f *testing.F) {
	for _, s := range []string{"name: x\nsizes: [1, 2]\ninner: {slots: 3}\n", "wait: 2s\non: false\n", "- a\n", "a: &x 1\nb: *x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var x doc
		d := NewDecoder("doc")
		root, err := d.Root([]byte(text))
		if err == nil && root != nil {
			err = d.Struct(&x, nil)(root, "")
		}
		var fe *Error
		if err != nil && !errors.As(err, &fe) {
			t.Errorf("%q: error %v is not an *Error", text, err)
		}
	})
}

// either is a number written bare or as {n: N}.
type either struct{ N float64 }

func (e *either) DecodeYAML(d *Decoder, n *yaml.Node, p string) error {
	if n.Kind == yaml.ScalarNode {
		return Float(&e.N)(n, p)
	}
	return d.Mapping(n, p, map[string]Field{"n": Float(&e.N)})
}

// TestDecodable: a field whose type decodes itself is handed its node,
// in a list as in a struct, and its errors keep the field's path.
func TestDecodable(t *testing.T) {
	var x struct {
		One  either   `yaml:"one"`
		Many []either `yaml:"many"`
	}
	d := NewDecoder("doc")
	root, _ := d.Root([]byte("one: 2\nmany: [3, {n: 4}]\n"))
	if err := d.Struct(&x, nil)(root, ""); err != nil || x.One.N != 2 || len(x.Many) != 2 || x.Many[1].N != 4 {
		t.Errorf("got %+v, %v", x, err)
	}
	root, _ = d.Root([]byte("many:\n  - {m: 4}\n"))
	var fe *Error
	if err := d.Struct(&x, nil)(root, ""); !errors.As(err, &fe) || fe.Field != "many[0].m" || fe.Line != 2 {
		t.Errorf("got %v, want an error at line 2 naming many[0].m", err)
	}
}
