package slo

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ParseObjective reads an objective from YAML. Errors are *FieldError
// naming the field and its line; unknown fields are errors, so a typo
// never silently drops a target.
func ParseObjective(data []byte) (*Objective, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &FieldError{Field: "objective", Line: 1, Msg: "the file is empty"}
	}
	d := &decoder{lines: map[string]int{}}
	o := &Objective{}
	if err := d.mapping(doc.Content[0], "", d.objectiveFields(o)); err != nil {
		return nil, err
	}
	if o.Priority == "" {
		o.Priority = PriorityResponsiveness
	}
	if err := o.Validate(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Line = d.line(fe.Field)
		}
		return nil, err
	}
	return o, nil
}

// yamlError turns the YAML library's "yaml: line N: msg" into a FieldError.
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ":"); ok {
			if v, err := strconv.Atoi(n); err == nil {
				line, msg = v, strings.TrimSpace(tail)
			}
		}
	}
	return &FieldError{Field: "objective", Line: line, Msg: "invalid YAML: " + msg}
}

// decoder walks YAML nodes, remembering each field's line so that
// validation errors can point at it.
type decoder struct{ lines map[string]int }

type fieldFunc func(n *yaml.Node, path string) error

func (d *decoder) line(field string) int {
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

// mapping decodes a mapping node field by field.
func (d *decoder) mapping(n *yaml.Node, path string, fields map[string]fieldFunc) error {
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = n.Line
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &FieldError{Field: orTop(path), Line: n.Line, Msg: "want a mapping of fields, got " + kindName(n)}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		f, ok := fields[k.Value]
		if !ok {
			return &FieldError{Field: p, Line: k.Line, Msg: "unknown field (known: " + known(fields) + ")"}
		}
		if seen[k.Value] {
			return &FieldError{Field: p, Line: k.Line, Msg: "given twice"}
		}
		seen[k.Value] = true
		d.lines[p] = k.Line
		if err := f(v, p); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) objectiveFields(o *Objective) map[string]fieldFunc {
	return map[string]fieldFunc{
		"name": str(&o.Name), "description": str(&o.Description),
		"model": str(&o.Model), "quantization": str(&o.Quantization),
		"workload":       func(n *yaml.Node, p string) error { return d.mapping(n, p, tagFields(&o.Workload)) },
		"load":           func(n *yaml.Node, p string) error { return d.mapping(n, p, d.loadFields(&o.Load)) },
		"context_length": integer(&o.ContextLength),
		"no_oom":         boolean(&o.NoOOM),
		"priority":       str(&o.Priority),
		"slos":           func(n *yaml.Node, p string) error { return d.slos(n, p, o) },
	}
}

func (d *decoder) loadFields(l *Load) map[string]fieldFunc {
	return map[string]fieldFunc{
		"concurrency": d.list(func(n *yaml.Node, p string) error {
			var v int
			err := integer(&v)(n, p)
			l.Concurrency = append(l.Concurrency, v)
			return err
		}),
		"rate": d.list(func(n *yaml.Node, p string) error {
			var v float64
			err := number(&v)(n, p)
			l.Rate = append(l.Rate, v)
			return err
		}),
		"max_concurrency": integer(&l.MaxConcurrency),
		"target":          number(&l.Target),
		"requests":        integer(&l.Requests),
		"duration":        str(&l.Duration),
		"warmup":          str(&l.Warmup),
	}
}

func (d *decoder) slos(n *yaml.Node, path string, o *Objective) error {
	return d.list(func(item *yaml.Node, p string) error {
		var text string
		if err := str(&text)(item, p); err != nil {
			return err
		}
		s, err := Parse(text)
		if err != nil {
			return &FieldError{Field: p, Line: item.Line, Msg: err.Error()}
		}
		o.SLOs = append(o.SLOs, s)
		return nil
	})(n, path)
}

// list decodes a sequence (or a single value, as a one-item list).
func (d *decoder) list(item fieldFunc) fieldFunc {
	return func(n *yaml.Node, p string) error {
		if n.Kind != yaml.SequenceNode {
			if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
				d.lines[p+"[0]"] = n.Line
				return item(n, p+"[0]")
			}
			return &FieldError{Field: p, Line: n.Line, Msg: "want a list, got " + kindName(n)}
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

func scalar(n *yaml.Node, p, want string) error {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return &FieldError{Field: p, Line: n.Line, Msg: "want " + want + ", got " + kindName(n)}
	}
	return nil
}

func str(dst *string) fieldFunc {
	return func(n *yaml.Node, p string) error {
		if err := scalar(n, p, "text"); err != nil {
			return err
		}
		*dst = n.Value
		return nil
	}
}

func integer(dst *int) fieldFunc {
	return func(n *yaml.Node, p string) error {
		if err := scalar(n, p, "a whole number"); err != nil {
			return err
		}
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, 32)
		if err != nil || n.ShortTag() != "!!int" {
			return &FieldError{Field: p, Line: n.Line, Msg: fmt.Sprintf("want a whole number, got %q", n.Value)}
		}
		*dst = int(v)
		return nil
	}
}

func number(dst *float64) fieldFunc {
	return func(n *yaml.Node, p string) error {
		if err := scalar(n, p, "a number"); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		tag := n.ShortTag()
		if err != nil || (tag != "!!int" && tag != "!!float") || math.IsNaN(v) || math.IsInf(v, 0) {
			return &FieldError{Field: p, Line: n.Line, Msg: fmt.Sprintf("want a number, got %q", n.Value)}
		}
		*dst = v
		return nil
	}
}

func boolean(dst *bool) fieldFunc {
	return func(n *yaml.Node, p string) error {
		if err := scalar(n, p, "true or false"); err != nil {
			return err
		}
		if n.ShortTag() != "!!bool" {
			return &FieldError{Field: p, Line: n.Line, Msg: fmt.Sprintf("want true or false, got %q", n.Value)}
		}
		*dst = n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
		return nil
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

func known(fields map[string]fieldFunc) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orTop(path string) string {
	if path == "" {
		return "objective"
	}
	return path
}

// tagFields decodes a struct's fields by their yaml tags (the workload
// section is workload.Spec, owned by package workload).
func tagFields(dst any) map[string]fieldFunc {
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	fields := map[string]fieldFunc{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		want := "a value"
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			want = "a whole number"
			if f.Type() == reflect.TypeFor[time.Duration]() {
				want = "a duration such as 2s"
			}
		case reflect.String:
			want = "text"
		}
		fields[name] = func(n *yaml.Node, p string) error {
			if err := scalar(n, p, want); err != nil {
				return err
			}
			if f.Kind() == reflect.Int && n.ShortTag() != "!!int" {
				return &FieldError{Field: p, Line: n.Line, Msg: fmt.Sprintf("want %s, got %q", want, n.Value)}
			}
			if err := n.Decode(f.Addr().Interface()); err != nil {
				return &FieldError{Field: p, Line: n.Line, Msg: fmt.Sprintf("want %s, got %q", want, n.Value)}
			}
			return nil
		}
	}
	return fields
}
