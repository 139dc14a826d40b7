package slo

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/servebench/servebench/internal/yamlfield"
)

// Candidate is one server `servebench decide` measures: where it is and
// the labels that describe it (gpus, gpu, runtime, quantization, cost, or
// anything else). Sim, instead of a URL, is the YAML configuration of an
// in-process simulator (servebench sim --print-config).
type Candidate struct {
	Name   string            `json:"name"`
	URL    string            `json:"url,omitempty"`
	API    string            `json:"api,omitempty"`
	Model  string            `json:"model,omitempty"`
	Labels map[string]string `json:"labels"`
	Sim    []byte            `json:"-"`
	// Simulated is true for a Sim candidate.
	Simulated bool `json:"simulated,omitempty"`
}

// Number returns a numeric label (gpus, cost), and whether it is one.
func (c Candidate) Number(label string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(c.Labels[label]), "$"), 64)
	return v, err == nil
}

// CandidateFile is decide's input file: an objective (preset or file)
// and the candidates.
type CandidateFile struct {
	Objective  string
	Candidates []Candidate
}

var candidateName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ParseCandidates reads a candidates file:
//
//	objective: chat          # optional: a preset or an objective file
//	candidates:
//	  - name: a100-vllm
//	    url: http://10.0.0.1:8000
//	    model: meta-llama/Llama-3.1-8B-Instruct   # optional
//	    api: openai-chat                          # optional
//	    labels: {gpus: 1, gpu: A100-80GB, runtime: vllm-0.6.3, quantization: bf16, cost: 2.1}
//	  - name: sim-16
//	    sim: {engine: {max_num_seqs: 16}}         # an in-process simulator instead of a url
//
// Errors are *FieldError with the line.
func ParseCandidates(data []byte) (*CandidateFile, error) {
	d := yamlfield.NewDecoder("candidates")
	root, err := d.Root(data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, &FieldError{Field: "candidates", Line: 1, Msg: "the file is empty"}
	}
	cf := &CandidateFile{}
	err = d.Mapping(root, "", map[string]yamlfield.Field{
		"objective":  yamlfield.String(&cf.Objective),
		"candidates": d.List(func(n *yaml.Node, p string) error { return candidate(d, n, p, cf) }),
	})
	if err != nil {
		return nil, err
	}
	if len(cf.Candidates) == 0 {
		return nil, &FieldError{Field: "candidates", Line: d.Line("candidates"), Msg: "list at least one candidate"}
	}
	return cf, nil
}

func candidate(d *yamlfield.Decoder, n *yaml.Node, p string, cf *CandidateFile) error {
	c := Candidate{Labels: map[string]string{}}
	err := d.Mapping(n, p, map[string]yamlfield.Field{
		"name": yamlfield.String(&c.Name), "url": yamlfield.String(&c.URL),
		"api": yamlfield.String(&c.API), "model": yamlfield.String(&c.Model),
		"labels": func(n *yaml.Node, lp string) error { return labels(n, lp, c.Labels) },
		"sim": func(n *yaml.Node, sp string) error {
			if n.Kind != yaml.MappingNode {
				return &FieldError{Field: sp, Line: n.Line, Msg: "want the simulator's settings as a mapping (servebench sim --print-config)"}
			}
			b, err := yaml.Marshal(n)
			c.Sim, c.Simulated = b, true
			return err
		},
	})
	if err != nil {
		return err
	}
	if err := cf.add(c); err != nil {
		err.Field, err.Line = p+"."+err.Field, d.Line(p+"."+err.Field)
		return err
	}
	return nil
}

func labels(n *yaml.Node, p string, into map[string]string) error {
	if n.Kind != yaml.MappingNode {
		return &FieldError{Field: p, Line: n.Line, Msg: "want a mapping of label: value"}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var s string
		if err := yamlfield.String(&s)(v, p+"."+k.Value); err != nil {
			return err
		}
		into[k.Value] = s
	}
	return nil
}

// add checks a candidate and appends it; a *FieldError names the field
// relative to the candidate.
func (cf *CandidateFile) add(c Candidate) *FieldError {
	switch {
	case !candidateName.MatchString(c.Name):
		return fieldErr("name", "want a short name of letters, digits, '.', '_' or '-' (got %q); it names the candidate's run directory", c.Name)
	case c.URL == "" && c.Sim == nil:
		return fieldErr("url", "give the server's url (or sim: settings for a simulated one)")
	case c.URL != "" && c.Sim != nil:
		return fieldErr("sim", "a candidate is a url or a simulator, not both")
	}
	for _, l := range []string{"gpus", "cost"} {
		if v, ok := c.Labels[l]; ok {
			if _, isNum := c.Number(l); !isNum {
				return fieldErr("labels."+l, "want a number (got %q)", v)
			}
		}
	}
	for _, o := range cf.Candidates {
		if o.Name == c.Name {
			return fieldErr("name", "%q is used by two candidates", c.Name)
		}
	}
	cf.Candidates = append(cf.Candidates, c)
	return nil
}

// ParseTarget reads a candidate given on one line (decide's --target): comma-separated key=value pairs with
// name and url; api and model set those, anything else is a label.
// E.g. "name=h100,url=http://10.0.0.2:8000,gpus=1,cost=4".
func ParseTarget(s string) (Candidate, error) {
	c := Candidate{Labels: map[string]string{}}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return c, errors.New("want key=value pairs, e.g. name=a,url=http://127.0.0.1:8000,gpus=1")
		}
		switch k {
		case "name":
			c.Name = v
		case "url":
			c.URL = v
		case "api":
			c.API = v
		case "model":
			c.Model = v
		default:
			c.Labels[k] = v
		}
	}
	var cf CandidateFile
	if err := cf.add(c); err != nil {
		return c, err
	}
	return c, nil
}
