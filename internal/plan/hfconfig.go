package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// hfConfig reads fields of a Hugging Face config.json, remembering which
// field failed so that errors name it.
type hfConfig struct {
	raw map[string]json.RawMessage
	err error
}

func newHFConfig(data []byte) (*hfConfig, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("config.json is not a JSON object: %w", err)
	}
	if raw == nil {
		return nil, fmt.Errorf("config.json is not a JSON object")
	}
	c := &hfConfig{raw: raw}
	// Multimodal wrappers (Gemma 3, Llama 4, ...) keep the language model
	// in text_config; plan that part.
	if tc, ok := raw["text_config"]; ok {
		var inner map[string]json.RawMessage
		if json.Unmarshal(tc, &inner) == nil && inner != nil {
			for k, v := range raw { // dtype and quantization often sit outside
				if _, ok := inner[k]; !ok && k != "text_config" && k != "vision_config" {
					inner[k] = v
				}
			}
			c.raw = inner
		}
	}
	return c, nil
}

func (c *hfConfig) has(name string) bool {
	v, ok := c.raw[name]
	return ok && string(v) != "null"
}

// num reads a numeric field; def is returned when the field is absent or
// null. A field of the wrong type is an error naming it.
func (c *hfConfig) num(name string, def float64) float64 {
	if !c.has(name) {
		return def
	}
	var n json.Number
	if err := json.Unmarshal(c.raw[name], &n); err != nil {
		c.fail(fmt.Errorf("field %s: want a number, got %s", name, truncate(string(c.raw[name]), 40)))
		return def
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		c.fail(fmt.Errorf("field %s: not a finite number", name))
		return def
	}
	return f
}

// int reads an integer field within [0, 1<<40].
func (c *hfConfig) int(name string, def int) int {
	f := c.num(name, float64(def))
	if f < 0 || f > 1<<40 || f != math.Trunc(f) {
		c.fail(fmt.Errorf("field %s: want a non-negative integer, got %v", name, f))
		return def
	}
	return int(f)
}

// need reads an integer field that must be present and positive.
func (c *hfConfig) need(name string, aliases ...string) int {
	for _, n := range append([]string{name}, aliases...) {
		if c.has(n) {
			v := c.int(n, 0)
			if v <= 0 || v > 1<<30 {
				c.fail(fmt.Errorf("field %s must be positive and plausible, got %d", n, v))
			}
			return v
		}
	}
	c.fail(fmt.Errorf("config.json is missing field %s", name))
	return 0
}

func (c *hfConfig) str(name string) string {
	var s string
	if c.has(name) && json.Unmarshal(c.raw[name], &s) != nil {
		c.fail(fmt.Errorf("field %s: want a string", name))
	}
	return s
}

func (c *hfConfig) boolean(name string, def bool) bool {
	if !c.has(name) {
		return def
	}
	var b bool
	if err := json.Unmarshal(c.raw[name], &b); err != nil {
		c.fail(fmt.Errorf("field %s: want true or false", name))
		return def
	}
	return b
}

func (c *hfConfig) strings(name string) []string {
	var s []string
	if c.has(name) && json.Unmarshal(c.raw[name], &s) != nil {
		c.fail(fmt.Errorf("field %s: want a list of strings", name))
	}
	return s
}

func (c *hfConfig) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// archParser fills a Shape from one model family's config fields.
type archParser func(c *hfConfig, s *Shape)

// hfArchs are the model_type values the planner understands exactly.
var hfArchs = map[string]archParser{
	"llama":       parseDense,
	"mistral":     parseDense,
	"phi3":        parseDense,
	"granite":     parseDense,
	"olmo2":       parseDense,
	"smollm3":     parseDense,
	"qwen2":       parseQwen,
	"qwen3":       parseQwen,
	"qwen3_moe":   parseQwenMoE,
	"mixtral":     parseMixtral,
	"gemma":       parseGemma,
	"gemma2":      parseGemma,
	"gemma3":      parseGemma,
	"gemma3_text": parseGemma,
	"falcon":      parseFalcon,
	"deepseek_v2": parseDeepSeek,
	"deepseek_v3": parseDeepSeek,
	"jamba":       parseJamba,
}

// SupportedArchitectures lists the model_type values ParseHFConfig knows.
func SupportedArchitectures() []string {
	names := make([]string, 0, len(hfArchs))
	for n := range hfArchs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseHFConfig reads a model's shape from a Hugging Face config.json. An
// architecture it does not know is an error listing the known ones, unless
// approximate is set: then it is read as a dense decoder, with a warning.
func ParseHFConfig(data []byte, approximate bool) (*Shape, error) {
	c, err := newHFConfig(data)
	if err != nil {
		return nil, err
	}
	arch := c.str("model_type")
	if c.err != nil {
		return nil, c.err
	}
	parse, ok := hfArchs[arch]
	s := &Shape{Arch: arch}
	if !ok {
		if !approximate {
			return nil, fmt.Errorf("%w model_type=%q; supported: %s (or use --approximate to read it as a dense decoder)",
				ErrArchitecture, arch, strings.Join(SupportedArchitectures(), ", "))
		}
		s.Warnings = append(s.Warnings, fmt.Sprintf("architecture %q is not known: read as a dense decoder (llama-like); KV and parameter counts are approximations", arch))
		parse = parseDense
	}
	parse(c, s)
	if c.err != nil {
		return nil, c.err
	}
	s.CheckpointFmt = checkpointFormat(c, s)
	if c.err != nil {
		return nil, c.err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}
