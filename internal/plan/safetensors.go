package plan

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// maxHeader bounds a safetensors JSON header; real ones are a few MB.
const maxHeader = 100 << 20

// LoadHFModel reads a model's shape from a config.json (a file, or a
// directory holding one). Parameter counts come, best first, from the
// safetensors headers of every shard present, from the index's total_size,
// or from the config alone.
func LoadHFModel(path string, approximate bool) (*Shape, error) {
	dir, file := path, filepath.Join(path, "config.json")
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		dir, file = filepath.Dir(path), path
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := ParseHFConfig(data, approximate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	s.Name = filepath.Base(dir)
	if abs, err := filepath.Abs(dir); err == nil {
		s.Name = filepath.Base(abs)
	}
	if err := refineParams(dir, s); err != nil {
		return nil, err
	}
	return s, nil
}

type stIndex struct {
	Metadata struct {
		TotalSize json.Number `json:"total_size"`
	} `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// refineParams replaces the config-derived parameter count with the
// checkpoint's when the checkpoint is there.
func refineParams(dir string, s *Shape) error {
	shards := []string{"model.safetensors"}
	var idx stIndex
	data, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json"))
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &idx); err != nil {
			return fmt.Errorf("model.safetensors.index.json: %w", err)
		}
		shards = uniqueValues(idx.WeightMap)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if sum, ok, err := sumShards(dir, shards, s.Layers); err != nil {
		return err
	} else if ok && sum.exact && sum.params > 0 {
		s.applyCount(sum, "safetensors headers")
		return nil
	} else if ok && sum.bytes > 0 {
		s.CheckpointBytes = sum.bytes // packed integer weights: elements are not parameters
		return nil
	}
	if total, err := idx.Metadata.TotalSize.Int64(); err == nil && total > 0 {
		s.CheckpointBytes = total
		if b := Formats[s.CheckpointFmt].Bits; b == 16 {
			s.applyCount(tensorSum{params: total / 2}, "safetensors index total_size / 2 bytes")
		}
	}
	return nil
}

type tensorSum struct {
	params, experts, bytes int64
	exact                  bool // every tensor is a float weight, so params are exact
}

// applyCount installs a checkpoint-derived count, keeping the config's
// split into experts and embeddings when the headers did not give one.
func (s *Shape) applyCount(t tensorSum, source string) {
	if t.bytes > 0 {
		s.CheckpointBytes = t.bytes
	}
	if d := math.Abs(float64(t.params-s.Params)) / float64(t.params); d > 0.02 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("config-derived parameter count %s differs from the checkpoint's %s by %.1f%%",
			FormatCount(s.Params), FormatCount(t.params), 100*d))
	}
	s.Params = t.params
	if t.experts > 0 {
		s.ExpertParams = t.experts
	}
	s.ActiveParams = activeParams(s)
	s.ParamsSource = source
}

// sumShards reads the header of every shard; ok is false unless all are
// present.
func sumShards(dir string, shards []string, layers int) (tensorSum, bool, error) {
	var sum tensorSum
	sum.exact = true
	if len(shards) == 0 {
		return sum, false, nil
	}
	for _, name := range shards {
		f, err := os.Open(filepath.Join(dir, filepath.Base(name)))
		if errors.Is(err, fs.ErrNotExist) {
			return sum, false, nil
		} else if err != nil {
			return sum, false, err
		}
		h, err := ReadSafetensorsHeader(f)
		f.Close()
		if err != nil {
			return sum, false, fmt.Errorf("%s: %w", name, err)
		}
		h.addTo(&sum, layers)
	}
	return sum, true, nil
}

// Tensor is one entry of a safetensors header.
type Tensor struct {
	DType   string  `json:"dtype"`
	Shape   []int64 `json:"shape"`
	Offsets []int64 `json:"data_offsets"`
}

// Header is a parsed safetensors header: tensors by name.
type Header map[string]Tensor

// ReadSafetensorsHeader reads the 8-byte little-endian header length and
// the JSON header that follows; tensor data is not read.
func ReadSafetensorsHeader(r io.Reader) (Header, error) {
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return nil, fmt.Errorf("safetensors header length: %w", err)
	}
	if n == 0 || n > maxHeader {
		return nil, fmt.Errorf("safetensors header length %d out of range (1..%d)", n, maxHeader)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("safetensors header: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(buf, &raw); err != nil {
		return nil, fmt.Errorf("safetensors header: %w", err)
	}
	h := Header{}
	for name, v := range raw {
		if name == "__metadata__" {
			continue
		}
		var t Tensor
		if err := json.Unmarshal(v, &t); err != nil {
			return nil, fmt.Errorf("safetensors tensor %q: %w", name, err)
		}
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("safetensors tensor %q: %w", name, err)
		}
		h[name] = t
	}
	return h, nil
}

func (t Tensor) check() error {
	if len(t.Offsets) != 2 || t.Offsets[0] < 0 || t.Offsets[1] < t.Offsets[0] {
		return fmt.Errorf("bad data_offsets %v", t.Offsets)
	}
	for _, d := range t.Shape {
		if d < 0 || d > 1<<40 {
			return fmt.Errorf("bad shape %v", t.Shape)
		}
	}
	return nil
}

// Elements is the product of the shape.
func (t Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

var layerIndex = regexp.MustCompile(`\.layers\.(\d+)\.`)

// addTo sums parameters and bytes. Layers past the model's depth (DeepSeek's
// multi-token-prediction layer) and quantization scales are left out of the
// parameter count.
func (h Header) addTo(sum *tensorSum, layers int) {
	for name, t := range h {
		if m := layerIndex.FindStringSubmatch(name); m != nil {
			if i, _ := strconv.Atoi(m[1]); i >= layers {
				continue
			}
		}
		sum.bytes += t.Offsets[1] - t.Offsets[0]
		if isScale(name) {
			continue
		}
		if !isFloat(t.DType) {
			sum.exact = false
			continue
		}
		sum.params += t.Elements()
		if strings.Contains(name, ".experts.") {
			sum.experts += t.Elements()
		}
	}
}

func isScale(name string) bool {
	for _, suf := range []string{"_scale_inv", "_scale", ".scales", ".qzeros", ".g_idx"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

func isFloat(dtype string) bool {
	switch dtype {
	case "F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2":
		return true
	}
	return false
}

func uniqueValues(m map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range m {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
