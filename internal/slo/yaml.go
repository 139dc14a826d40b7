package slo

import (
	"errors"

	"go.yaml.in/yaml/v3"

	"github.com/servebench/servebench/internal/yamlfield"
)

// ParseObjective reads an objective from YAML. Errors are *FieldError
// naming the field and its line; unknown fields are errors, so a typo
// never silently drops a target.
func ParseObjective(data []byte) (*Objective, error) {
	d := yamlfield.NewDecoder("objective")
	root, err := d.Root(data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, &FieldError{Field: "objective", Line: 1, Msg: "the file is empty"}
	}
	o := &Objective{}
	slos := d.List(func(n *yaml.Node, p string) error {
		var text string
		if err := yamlfield.String(&text)(n, p); err != nil {
			return err
		}
		s, err := Parse(text)
		if err != nil {
			return &FieldError{Field: p, Line: n.Line, Msg: err.Error()}
		}
		o.SLOs = append(o.SLOs, s)
		return nil
	})
	if err := d.Struct(o, map[string]yamlfield.Field{"slos": slos})(root, ""); err != nil {
		return nil, err
	}
	if o.Priority == "" {
		o.Priority = PriorityResponsiveness
	}
	if err := o.Validate(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Line = d.Line(fe.Field)
		}
		return nil, err
	}
	return o, nil
}
