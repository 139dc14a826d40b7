// Package yamlfield decodes the YAML files servebench reads (objectives,
// candidate lists, simulator configurations) strictly and field by field,
// so that every error names the dotted path of the field at fault and its
// line: an unknown field (with the known ones listed), a field given
// twice, a value of the wrong type. Structs are decoded by their yaml
// tags; a caller supplies a hook for a field whose text needs its own
// parser. It sits beside the YAML library and knows nothing of what the
// files mean.
package yamlfield

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Error is a field that cannot be used: its dotted path, e.g.
// "engine.max_num_seqs" or "slos[1]", and its line (0 when the value did
// not come from a file).
type Error struct {
	Field string
	Line  int
	Msg   string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Msg)
	}
	return e.Field + ": " + e.Msg
}

// Field decodes one node found at path.
type Field func(n *yaml.Node, path string) error

// Decoder decodes nodes, remembering each field's line so that errors
// found later (validation) can point at it. Top names the whole document
// in errors about it.
type Decoder struct {
	Top   string
	lines map[string]int
}

// NewDecoder returns a decoder whose document is called top in errors.
func NewDecoder(top string) *Decoder { return &Decoder{Top: top, lines: map[string]int{}} }

// Root parses data and returns its top node, or nil for an empty
// document. A syntax error is an *Error with the line the YAML library
// names.
func (d *Decoder) Root(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if n, tail, ok := strings.Cut(rest, ":"); ok {
				if v, err := strconv.Atoi(n); err == nil {
					line, msg = v, strings.TrimSpace(tail)
				}
			}
		}
		return nil, &Error{Field: d.Top, Line: line, Msg: "invalid YAML: " + msg}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// Line is the line of field, or of the nearest enclosing field that has
// one.
func (d *Decoder) Line(field string) int {
	for f := field; f != ""; {
		if l, ok := d.lines[f]; ok {
			return l
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return d.lines[""]
}

// Mapping decodes a mapping node with one Field per key. A null node is
// an empty mapping.
func (d *Decoder) Mapping(n *yaml.Node, path string, fields map[string]Field) error {
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = n.Line
	}
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &Error{Field: cmp.Or(path, d.Top), Line: n.Line, Msg: "want a mapping of fields, got " + kindName(n)}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		f, ok := fields[k.Value]
		if !ok {
			return &Error{Field: p, Line: k.Line, Msg: "unknown field (known: " + known(fields) + ")"}
		}
		if seen[k.Value] {
			return &Error{Field: p, Line: k.Line, Msg: "given twice"}
		}
		seen[k.Value] = true
		d.lines[p] = k.Line
		if err := f(v, p); err != nil {
			return err
		}
	}
	return nil
}

// List decodes a sequence item by item; a single value is a one-item
// list.
func (d *Decoder) List(item Field) Field {
	return func(n *yaml.Node, p string) error {
		if n.Kind != yaml.SequenceNode {
			if n.Kind == yaml.ScalarNode && !isNull(n) {
				d.lines[p+"[0]"] = n.Line
				return item(n, p+"[0]")
			}
			return &Error{Field: p, Line: n.Line, Msg: "want a list, got " + kindName(n)}
		}
		for i, c := range n.Content {
			ip := fmt.Sprintf("%s[%d]", p, i)
			d.lines[ip] = c.Line
			if err := item(c, ip); err != nil {
				return err
			}
		}
		return nil
	}
}

// Struct decodes a mapping into the struct dst points to, by its fields'
// yaml tags; hooks decode the fields they name instead. Fields the node
// leaves out keep their values, so dst may hold defaults.
func (d *Decoder) Struct(dst any, hooks map[string]Field) Field {
	fields := d.structFields(reflect.ValueOf(dst).Elem())
	for k, h := range hooks {
		fields[k] = h
	}
	return func(n *yaml.Node, p string) error { return d.Mapping(n, p, fields) }
}

func (d *Decoder) structFields(v reflect.Value) map[string]Field {
	fields := map[string]Field{}
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = d.value(v.Field(i))
	}
	return fields
}

// Decodable is a type with a YAML form of its own (a number or a
// mapping, say): Struct decodes fields of the type with it.
type Decodable interface {
	DecodeYAML(d *Decoder, n *yaml.Node, path string) error
}

// value decodes a node into v by v's type.
func (d *Decoder) value(v reflect.Value) Field {
	if dec, ok := v.Addr().Interface().(Decodable); ok {
		return func(n *yaml.Node, p string) error { return dec.DecodeYAML(d, n, p) }
	}
	if v.Type() == reflect.TypeFor[time.Duration]() {
		return Duration(v.Addr().Interface().(*time.Duration))
	}
	switch v.Kind() {
	case reflect.Struct:
		fields := d.structFields(v)
		return func(n *yaml.Node, p string) error { return d.Mapping(n, p, fields) }
	case reflect.Slice:
		return d.List(func(n *yaml.Node, p string) error {
			e := reflect.New(v.Type().Elem()).Elem()
			if err := d.value(e)(n, p); err != nil {
				return err
			}
			v.Set(reflect.Append(v, e))
			return nil
		})
	case reflect.String:
		return String(v.Addr().Interface().(*string))
	case reflect.Int, reflect.Int64:
		return func(n *yaml.Node, p string) error {
			var x int64
			if err := integer(n, p, v.Type().Bits(), &x); err != nil {
				return err
			}
			v.SetInt(x)
			return nil
		}
	case reflect.Float64:
		return Float(v.Addr().Interface().(*float64))
	case reflect.Bool:
		return Bool(v.Addr().Interface().(*bool))
	}
	panic("yamlfield: no decoder for " + v.Type().String())
}

// scalar checks that n is a single, non-null value.
func scalar(n *yaml.Node, p, want string) error {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return &Error{Field: p, Line: n.Line, Msg: "want " + want + ", got " + kindName(n)}
	}
	return nil
}

// String decodes any single value as its text.
func String(dst *string) Field {
	return func(n *yaml.Node, p string) error {
		if err := scalar(n, p, "text"); err != nil {
			return err
		}
		*dst = n.Value
		return nil
	}
}

// integer decodes a whole number of at most bits bits.
func integer(n *yaml.Node, p string, bits int, dst *int64) error {
	if err := scalar(n, p, "a whole number"); err != nil {
		return err
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, bits)
	if err != nil || n.ShortTag() != "!!int" {
		return &Error{Field: p, Line: n.Line, Msg: fmt.Sprintf("want a whole number, got %q", n.Value)}
	}
	*dst = v
	return nil
}

// Float decodes a finite number.
func Float(dst *float64) Field {
	return func(n *yaml.Node, p string) error {
		if err := scalar(n, p, "a number"); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		tag := n.ShortTag()
		if err != nil || (tag != "!!int" && tag != "!!float") || math.IsNaN(v) || math.IsInf(v, 0) {
			return &Error{Field: p, Line: n.Line, Msg: fmt.Sprintf("want a number, got %q", n.Value)}
		}
		*dst = v
		return nil
	}
}

// Bool decodes true or false (not yes or no).
func Bool(dst *bool) Field {
	return func(n *yaml.Node, p string) error {
		if err := scalar(n, p, "true or false"); err != nil {
			return err
		}
		if n.ShortTag() != "!!bool" {
			return &Error{Field: p, Line: n.Line, Msg: fmt.Sprintf("want true or false, got %q", n.Value)}
		}
		*dst = strings.EqualFold(n.Value, "true")
		return nil
	}
}

// Duration decodes a duration such as 2s or 150ms.
func Duration(dst *time.Duration) Field {
	return func(n *yaml.Node, p string) error {
		if err := scalar(n, p, "a duration such as 2s"); err != nil {
			return err
		}
		v, err := time.ParseDuration(n.Value)
		if err != nil {
			return &Error{Field: p, Line: n.Line, Msg: fmt.Sprintf("want a duration such as 2s, got %q", n.Value)}
		}
		*dst = v
		return nil
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if isNull(n) {
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

func known(fields map[string]Field) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
