package sim

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ParseConfig reads a YAML configuration over DefaultConfig: fields the file
// leaves out keep their defaults. Unknown fields, values of the wrong type
// and invalid values are errors that name the field.
func ParseConfig(data []byte) (Config, error) { return ParseConfigOver(DefaultConfig(), data) }

// ParseConfigOver reads a YAML configuration over base, as ParseConfig does
// over DefaultConfig.
func ParseConfigOver(base Config, data []byte) (Config, error) {
	cfg := base
	if err := cfg.decodeYAML(data); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// decodeYAML overlays data on c without validating the result.
func (c *Config) decodeYAML(data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("invalid YAML: %w", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty file: all defaults
	}
	return decodeNode(doc.Content[0], reflect.ValueOf(c).Elem(), "")
}

// decodeNode decodes n into v field by field, so that an error can name
// the dotted path of the field at fault.
func decodeNode(n *yaml.Node, v reflect.Value, path string) error {
	if v.Kind() != reflect.Struct {
		if n.Kind != yaml.ScalarNode {
			return fieldErr(path, "want a single value, got a %s", kindName(n.Kind))
		}
		isInt := v.Kind() == reflect.Int || v.Kind() == reflect.Int64
		if err := n.Decode(v.Addr().Interface()); err != nil || (isInt && n.ShortTag() != "!!int") {
			return fieldErr(path, "want %s, got %q", typeName(v.Kind()), n.Value)
		}
		return nil
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fieldErr(orTop(path), "want a mapping of fields, got a %s", kindName(n.Kind))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		f, ok := fieldByTag(v, key)
		if !ok {
			return fieldErr(join(path, key), "unknown field (known: %s)", strings.Join(tags(v.Type()), ", "))
		}
		if err := decodeNode(val, f, join(path, key)); err != nil {
			return err
		}
	}
	return nil
}

func fieldByTag(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		if tagName(t.Field(i)) == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func tags(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		out = append(out, tagName(t.Field(i)))
	}
	return out
}

func tagName(f reflect.StructField) string { return strings.Split(f.Tag.Get("yaml"), ",")[0] }

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orTop(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}

func typeName(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	}
	return "a string"
}

// fieldDocs are the comments printed beside each field by YAML.
var fieldDocs = map[string]string{
	"seed":                          "drives step jitter, natural output lengths and generated text",
	"time_scale":                    "wall time = model time / time_scale; every duration a client sees is divided by it",
	"jitter":                        "uniform multiplicative noise on each step time (0.05 = ±5%); 0 = exact",
	"model.name":                    "served model name (/v1/models, /api/tags)",
	"model.params":                  "parameters",
	"model.heads":                   "query heads (0 = hidden / head_dim)",
	"model.bytes_per_weight":        "2 = BF16",
	"model.bytes_per_kv":            "KV cache element size",
	"model.max_model_len":           "prompt + output cap (lowered to the KV capacity if larger)",
	"device.peak_tflops":            "dense peak, TFLOP/s",
	"device.mem_bandwidth_gbs":      "memory bandwidth, GB/s",
	"device.compute_efficiency":     "achieved fraction of peak FLOP/s",
	"device.bandwidth_efficiency":   "achieved fraction of bandwidth",
	"device.memory_gib":             "device memory",
	"device.memory_utilization":     "fraction for weights + KV cache (vLLM gpu_memory_utilization)",
	"device.step_overhead_ms":       "fixed cost per engine step",
	"engine.max_num_seqs":           "sequence slots (vLLM default 256; small so the demo shows saturation)",
	"engine.max_num_batched_tokens": "token budget per step (chunked prefill)",
	"engine.block_size":             "KV block size in tokens",
	"engine.kv_tokens":              "KV capacity override in tokens (0 = derive from device memory)",
	"engine.preemption":             "recompute (vLLM) or reject (fail the request with a KV-cache error)",
	"engine.eos_mean_tokens":        "mean natural answer length without ignore_eos (0 = always max_tokens)",
}

// YAML writes the configuration as commented YAML that ParseConfig
// reads back unchanged.
func (c Config) YAML() ([]byte, error) {
	var n yaml.Node
	type plain Config // plain struct encoding
	if err := n.Encode(plain(c)); err != nil {
		return nil, err
	}
	annotate(&n, "")
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

func annotate(n *yaml.Node, path string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := join(path, n.Content[i].Value)
		if doc, ok := fieldDocs[key]; ok {
			n.Content[i+1].LineComment = doc
		}
		annotate(n.Content[i+1], key)
	}
}

// WriteYAML writes the configuration as YAML that ParseConfig reads back,
// headed by comments stating the time base and the derived figures.
func (c Config) WriteYAML(w io.Writer) error {
	body, err := c.YAML()
	if err != nil {
		return err
	}
	d := c.Derived()
	scale := c.TimeScale
	ms := func(t time.Duration) string { return strconv.FormatFloat(t.Seconds()*1e3, 'f', 3, 64) + " ms" }
	_, err = fmt.Fprintf(w, `# servebench sim: effective configuration; load it back with --config FILE.
#
# Time base: the simulator steps a virtual clock of model time and sleeps
# model time / time_scale of wall time. Every duration a client measures,
# and every duration the server reports (/metrics histograms, Ollama
# *_duration fields), is model time / time_scale: ratios are unchanged.
# Every response carries a Servebench-Time-Scale header with time_scale;
# servebench reads it and reports model time.
#
# Derived figures, in model time:
#   weights               %.2f GB
#   KV bytes per token    %.0f (%.1f KiB)
#   KV capacity           %d blocks x %d = %d tokens
#   max_model_len         %d (effective)
#   batch-1 decode        %s per token = %.1f tok/s (%s)
#   prefill               %.0f tok/s in full %d-token steps (%s)
#   512-token TTFT        %s on an idle server
# As a client sees them at time_scale %g:
#   batch-1 decode        %.1f tok/s
#   512-token TTFT        %s
%s`, d.WeightBytes/1e9, d.KVBytesPerToken, d.KVBytesPerToken/1024,
		d.KVBlocks, c.Engine.BlockSize, d.KVCapacityTokens, d.MaxModelLen,
		ms(d.Batch1Decode), d.Batch1DecodeTPS, d.DecodeBound,
		d.PrefillTPS, c.Engine.MaxNumBatchedTokens, d.PrefillBound, ms(d.TTFT512),
		scale, d.Batch1DecodeTPS*scale, ms(c.Wall(d.TTFT512)), body)
	return err
}
