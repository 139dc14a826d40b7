package store

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// Entry is one run as it is stored: what run.json and summary.json hold,
// and the directory they are in.
type Entry struct {
	Run    *record.Run
	Points []metrics.PointSummary
	// Objective is the objective as summary.json writes it (null without
	// one); Verdict its verdict.
	Objective json.RawMessage
	Verdict   *slo.Verdict
	// Dir is the run directory, absolute; empty for a run without --out.
	Dir string
}

// NewEntry is the entry of a run's summary (with its objective and
// verdict when it was judged), written to dir.
func NewEntry(s *metrics.Summary, o *slo.Objective, v *slo.Verdict, dir string) (*Entry, error) {
	e := &Entry{Run: s.Run, Points: s.Points, Verdict: v, Dir: dir}
	if o != nil {
		b, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		e.Objective = b
	}
	return e, e.check()
}

// Validate says whether e can be stored: an error is the entry's fault,
// and any other error of Put the database's.
func (e *Entry) Validate() error { return e.check() }

func (e *Entry) check() error {
	if e.Run == nil {
		return fmt.Errorf("no run.json: only runs with their context can be stored")
	}
	if _, err := time.Parse(time.RFC3339Nano, e.Run.Started); err != nil {
		return fmt.Errorf("run.json: started: want an RFC 3339 time, got %q", e.Run.Started)
	}
	return nil
}

// key identifies a run whichever directory holds it: a run started at
// one instant against one target is that run, copied or moved.
func (e *Entry) key() string {
	t := e.Run.Target
	return strings.Join([]string{e.Run.Started, t.URL, t.API, t.Model, strconv.FormatUint(e.Run.Seed, 10)}, "|")
}

// workloadKeys are run.json's keys that say what was sent (docs/OUTPUT.md);
// the seed is left out: another seed draws other prompts of the same
// workload.
var workloadKeys = []string{"prompt_tokens", "output_tokens", "ignore_eos", "workload", "workloads"}

// workload is the run's workload as canonical JSON (sorted keys), and its
// hash.
func (e *Entry) workload() (string, string, error) {
	all, err := canonical(e.Run)
	if err != nil {
		return "", "", err
	}
	w := map[string]any{}
	for _, k := range workloadKeys {
		if v, ok := all.(map[string]any)[k]; ok {
			w[k] = v
		}
	}
	b, err := json.Marshal(w)
	return string(b), hash(b), err
}

// objective is the objective as canonical JSON and its hash, "" without one.
func (e *Entry) objective() (text, sum, name string, err error) {
	if len(e.Objective) == 0 || string(e.Objective) == "null" {
		return "", "", "", nil
	}
	var v any
	if err := json.Unmarshal(e.Objective, &v); err != nil {
		return "", "", "", fmt.Errorf("objective: %w", err)
	}
	b, _ := json.Marshal(v)
	if m, ok := v.(map[string]any); ok {
		name, _ = m["name"].(string)
	}
	return string(b), hash(b), name, nil
}

// canonical is v as plain JSON values, which marshal with sorted keys, so
// that a struct and the same struct read back from a file hash alike.
func canonical(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}

func hash(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// labels are what a run is filtered by besides its target: the objective's
// model and quantization labels, what the server said it runs, the GPU,
// and the user's own (--label), which win.
func (e *Entry) labels(gpu string) map[string]string {
	l := map[string]string{"model": e.Run.Target.Model}
	srv := e.Run.Target.Server
	for k, v := range map[string]string{
		"quantization":    srv[record.ServerQuantization],
		"runtime":         srv[record.ServerRuntime],
		"runtime_version": srv[record.ServerRuntimeVersion],
		"model_id":        srv[record.ServerModelID],
		"gpu":             gpu,
	} {
		if v != "" {
			l[k] = v
		}
	}
	var o struct{ Model, Quantization string }
	if len(e.Objective) > 0 && json.Unmarshal(e.Objective, &o) == nil {
		if o.Model != "" {
			l["model"] = o.Model
		}
		if o.Quantization != "" {
			l["quantization"] = o.Quantization
		}
	}
	for k, v := range e.Run.Labels {
		l[k] = v
	}
	return l
}

// gpus names the GPUs telemetry saw ("2× NVIDIA H100 80GB HBM3"), their
// count and driver; all empty when none was sampled.
func (e *Entry) gpus() (name string, n int, driver string) {
	seen := map[string]string{}
	var drivers []string
	for _, p := range e.Points {
		if p.Telemetry == nil {
			continue
		}
		for _, g := range p.Telemetry.GPUs {
			id := g.Instance + "/" + strconv.Itoa(g.Index)
			seen[id] = cmp.Or(g.Name, seen[id])
			if g.Driver != "" && !slices.Contains(drivers, g.Driver) {
				drivers = append(drivers, g.Driver)
			}
		}
	}
	if len(seen) == 0 {
		return "", 0, ""
	}
	count := map[string]int{}
	for _, nm := range seen {
		count[cmp.Or(nm, "unnamed GPU")]++
	}
	var parts []string
	for nm, c := range count {
		if c > 1 {
			nm = fmt.Sprintf("%d× %s", c, nm)
		}
		parts = append(parts, nm)
	}
	slices.Sort(parts)
	slices.Sort(drivers)
	return strings.Join(parts, ", "), len(seen), strings.Join(drivers, ", ")
}

// maxContext is the context length the server reported, 0 when it did not.
func (e *Entry) maxContext() int {
	n, _ := strconv.Atoi(e.Run.Target.Server[record.ServerMaxModelLen])
	return n
}

// pointVerdict is the verdict of the load p belongs to, nil without an
// objective (repeats of a load share one).
func (e *Entry) pointVerdict(p *metrics.PointSummary) *slo.PointVerdict {
	if e.Verdict == nil {
		return nil
	}
	for i, v := range e.Verdict.Points {
		if slices.Contains(v.Points, p.Index) || (len(v.Points) == 0 && v.Load == p.Load) {
			return &e.Verdict.Points[i]
		}
	}
	return nil
}
