package sim

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/servebench/servebench/internal/yamlfield"
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
	d := yamlfield.NewDecoder("(top level)")
	root, err := d.Root(data)
	if err != nil || root == nil {
		return err // nil for an empty file: all defaults
	}
	return d.Struct(c, nil)(root, "")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldDocs are the comments printed beside each field by YAML.
var fieldDocs = map[string]string{
	"seed":                          "drives step jitter, natural output lengths and generated text",
	"time_scale":                    "wall time = model time / time_scale; every duration a client sees is divided by it",
	"jitter":                        "uniform multiplicative noise on each step time (0.05 = ±5%); 0 = exact",
	"wander":                        "slow wander of the engine's speed, sd as a fraction (0.1 = ±10% at one sd); 0 = steady",
	"wander_time":                   "the wander's correlation time, seconds of model time",
	"model.name":                    "served model name (/v1/models, /api/tags)",
	"model.params":                  "parameters",
	"model.heads":                   "query heads (0 = hidden / head_dim)",
	"model.intermediate":            "MLP width (with hidden and vocab: vLLM's activation peak)",
	"model.vocab":                   "vocabulary size",
	"model.tied_embeddings":         "input embedding is the output head (untied: one row read per token)",
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
	"engine.request_overhead_ms":    "per request before scheduling: API server, template, tokenization (adds to TTFT)",
	"engine.overhead_in":            "queue (vLLM: overhead before waiting for a slot) or slot (Ollama: after taking one)",
	"engine.eos_mean_tokens":        "mean natural answer length without ignore_eos (0 = always max_tokens)",
	"engine.enable_prefix_caching":  "keep full prompt blocks in a prefix cache and skip their prefill on a hit (vLLM v1 default: true)",
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
func (c Config) WriteYAML(w io.Writer) error { return c.writeYAML(w, true) }

// WriteYAMLScaleUnset writes the configuration as WriteYAML does but with
// time_scale commented out: the file then keeps the time base of whoever
// loads it (real time for servebench sim, DefaultTimeScale for servebench
// run's built-in simulator), so that a printed default changes nothing.
func (c Config) WriteYAMLScaleUnset(w io.Writer) error { return c.writeYAML(w, false) }

func (c Config) writeYAML(w io.Writer, scaleSet bool) error {
	body, err := c.YAML()
	if err != nil {
		return err
	}
	if !scaleSet {
		body = unsetTimeScale(body)
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

// unsetTimeScale comments out the top-level time_scale line of body.
func unsetTimeScale(body []byte) []byte {
	var out bytes.Buffer
	for line := range bytes.Lines(body) {
		if bytes.HasPrefix(line, []byte("time_scale:")) {
			fmt.Fprintf(&out, "# time_scale: unset = the loader's default: %g for servebench sim (real time), %g for servebench run's built-in simulator; set it to fix both\n",
				float64(ServeTimeScale), float64(DefaultTimeScale))
			continue
		}
		out.Write(line)
	}
	return out.Bytes()
}

// Changes lists the settings of c that differ from base, as "field value
// (default was)" with YAML field names, in the file's order; time_scale is
// left out (a run states its time base on its own).
func (c Config) Changes(base Config) []string {
	got, want := flatYAML(c), flatYAML(base)
	var out []string
	for _, kv := range got {
		if kv[0] == "time_scale" {
			continue
		}
		was := ""
		for _, b := range want {
			if b[0] == kv[0] {
				was = b[1]
			}
		}
		if kv[1] != was {
			out = append(out, fmt.Sprintf("%s %s (default %s)", kv[0], kv[1], was))
		}
	}
	return out
}

// flatYAML is c's fields as (path, value) pairs in YAML order.
func flatYAML(c Config) [][2]string {
	var n yaml.Node
	type plain Config
	if err := n.Encode(plain(c)); err != nil {
		return nil
	}
	var out [][2]string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, v := join(path, n.Content[i].Value), n.Content[i+1]
			if v.Kind == yaml.MappingNode {
				walk(v, key)
				continue
			}
			out = append(out, [2]string{key, v.Value})
		}
	}
	walk(&n, "")
	return out
}
