package enginecheck

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/plan"
)

// The KV-cache check holds the planner (servebench plan --json) to the
// engine's own account of the cache it allocated: llama.cpp's log line
//
//	llama_kv_cache: size =  128.00 MiB (  4096 cells,   8 layers,  4/4 seqs), K (f16):   64.00 MiB, V (f16):   64.00 MiB
//
// which Ollama's runner writes to the server log at each model load. The
// cells are per sequence (one KV stream per slot, kv_unified = false, as
// Ollama runs it); the size covers all of them. The size must equal the
// plan's to the digits printed; cells x seqs, the layers and the K/V type
// must agree as well.
//
// llama.cpp logs one such line per cache: a model with sliding-window layers
// has two (full and sliding), and only the last is read here. The test model
// has no sliding layers.

// KVCacheLine is one `llama_kv_cache: size = …` line, its numbers as printed.
type KVCacheLine struct {
	SizeMiB string // as printed, e.g. "128.00"
	Cells   int64  // per sequence
	Layers  int
	Seqs    int // sequences (slots) the cache holds
	KType   string
	VType   string
	Text    string // the line from "llama_kv_cache:" on
}

var kvLineRE = regexp.MustCompile(`llama_kv_cache: size = +([0-9]+\.[0-9]+) MiB \( *([0-9]+) cells, +([0-9]+) layers, +([0-9]+)/([0-9]+) seqs\), K \(([a-z0-9_]+)\): +[0-9.]+ MiB, V \(([a-z0-9_]+)\): +[0-9.]+ MiB`)

// kvLineMarker starts every KV-cache size line, parseable or not.
const kvLineMarker = "llama_kv_cache: size ="

// ParseKVCacheLine reads one log line. ok is false for a line that is not a
// KV-cache size line; err is set for one that is but cannot be read (a
// changed log format must fail the check, not skip it).
func ParseKVCacheLine(line string) (l KVCacheLine, ok bool, err error) {
	i := strings.Index(line, kvLineMarker)
	if i < 0 {
		return l, false, nil
	}
	text := strings.TrimRight(line[i:], "\r\n")
	m := kvLineRE.FindStringSubmatch(text)
	if m == nil {
		return l, true, fmt.Errorf("unrecognized KV-cache log line (has llama.cpp's format changed?): %q", text)
	}
	atoi := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	l = KVCacheLine{SizeMiB: m[1], Cells: atoi(m[2]), Layers: int(atoi(m[3])), Seqs: int(atoi(m[5])),
		KType: m[6], VType: m[7], Text: text}
	if l.Seqs <= 0 || l.Cells <= 0 {
		return l, true, fmt.Errorf("KV-cache log line with no cells or sequences: %q", text)
	}
	return l, true, nil
}

// LastKVCache returns the last KV-cache size line of an engine log: that of
// the model's most recent load.
func LastKVCache(r io.Reader) (KVCacheLine, error) {
	var last KVCacheLine
	found := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024) // Ollama logs long lines
	for sc.Scan() {
		l, ok, err := ParseKVCacheLine(sc.Text())
		if err != nil {
			return last, err
		}
		if ok {
			last, found = l, true
		}
	}
	if err := sc.Err(); err != nil {
		return last, fmt.Errorf("reading the engine log: %w", err)
	}
	if !found {
		return last, fmt.Errorf("no %q line in the engine log: was a model loaded (by llama.cpp)?", kvLineMarker)
	}
	return last, nil
}

// PlanKV is a plan's KV-cache prediction for its first device.
type PlanKV struct {
	Device string
	Engine string
	Bytes  int64 // all slots
	Cells  int64 // all slots (llama.cpp); per-sequence tokens x sequences
	Seqs   int64
	Layers int
	Type   string // the planner's KV type name, e.g. "fp16"
}

// ReadPlanKV reads the KV-cache figures of a servebench.plan/v1 document.
func ReadPlanKV(data []byte) (PlanKV, error) {
	var r plan.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return PlanKV{}, fmt.Errorf("plan JSON: %w", err)
	}
	if r.Schema != plan.Schema {
		return PlanKV{}, fmt.Errorf("plan JSON: schema %q, want %q (servebench plan --json)", r.Schema, plan.Schema)
	}
	if len(r.Devices) == 0 || !r.Devices[0].Supported || r.Devices[0].Budget.KV <= 0 {
		return PlanKV{}, errors.New("plan JSON: no supported device with a KV-cache budget (plan with one --gpu)")
	}
	d := r.Devices[0]
	return PlanKV{Device: d.Device, Engine: r.Engine.Name, Bytes: d.Budget.KV, Cells: d.Budget.KVTokens,
		Seqs: r.Engine.Slots, Layers: r.Model.AttentionLayers, Type: r.Model.KVType}, nil
}

// KVCheck is the outcome of comparing one log line with one plan.
type KVCheck struct {
	Log      KVCacheLine
	Plan     PlanKV
	PlanMiB  string // the plan's size printed as llama.cpp prints it
	Problems []string
}

// OK reports whether the plan matched the log.
func (c *KVCheck) OK() bool { return len(c.Problems) == 0 }

// CheckKVCache compares the engine's logged KV cache with the plan's.
func CheckKVCache(l KVCacheLine, p PlanKV) *KVCheck {
	c := &KVCheck{Log: l, Plan: p, PlanMiB: FormatMiB(p.Bytes)}
	if c.PlanMiB != l.SizeMiB {
		c.Problems = append(c.Problems, fmt.Sprintf("size: the engine logged %s MiB, the plan predicts %s MiB (%d B)",
			l.SizeMiB, c.PlanMiB, p.Bytes))
	}
	if got := l.Cells * int64(l.Seqs); got != p.Cells {
		c.Problems = append(c.Problems, fmt.Sprintf("cells: the engine logged %d cells x %d seqs = %d, the plan predicts %d",
			l.Cells, l.Seqs, got, p.Cells))
	}
	if int64(l.Seqs) != p.Seqs {
		c.Problems = append(c.Problems, fmt.Sprintf("sequences: the engine logged %d, the plan has %d slots (--parallel)", l.Seqs, p.Seqs))
	}
	if l.Layers != p.Layers {
		c.Problems = append(c.Problems, fmt.Sprintf("layers: the engine logged %d, the plan has %d attention layers", l.Layers, p.Layers))
	}
	for _, t := range []string{l.KType, l.VType} {
		if kt, err := plan.LookupKVType(t); err != nil || kt.Name != p.Type {
			c.Problems = append(c.Problems, fmt.Sprintf("type: the engine logged %s, the plan uses %s (--kv-dtype)", t, p.Type))
			break
		}
	}
	return c
}

// FormatMiB prints a byte count as llama.cpp's log does: a float32 number
// of MiB, "%.2f" (llama-kv-cache.cpp: (float)size / (1024.0f * 1024.0f)).
func FormatMiB(bytes int64) string {
	mib := float32(bytes) / float32(1024*1024)
	return strconv.FormatFloat(float64(mib), 'f', 2, 32)
}

// RenderKV writes the comparison: the log's line, the plan's figures and a
// verdict line, FAIL lines first.
func RenderKV(w io.Writer, c *KVCheck) error {
	for _, p := range c.Problems {
		fmt.Fprintf(w, "FAIL kv cache: %s\n", p)
	}
	verdict := "ok"
	if !c.OK() {
		verdict = fmt.Sprintf("FAIL, %d problems", len(c.Problems))
	}
	_, err := fmt.Fprintf(w, "kv cache: %s, %d slots x %d cells: engine %s MiB, plan %s MiB (%s, %s): %s\n",
		c.Plan.Engine, c.Log.Seqs, c.Log.Cells, c.Log.SizeMiB, c.PlanMiB, c.Plan.Type, c.Plan.Device, verdict)
	return err
}
