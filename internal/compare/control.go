package compare

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/slo"
)

// Difference is a property a controlled comparison holds equal that the
// two runs do not share.
type Difference struct {
	// Property names it for people ("quantization"); Key is where it is
	// read in run.json ("target.server.quantization").
	Property string `json:"property"`
	Key      string `json:"key"`
	A        string `json:"a"`
	B        string `json:"b"`
	// Known is true when both runs report the property and the values
	// differ; false when only one run reports it, so it cannot be checked.
	Known bool `json:"known"`
	// Consequence says what the difference does to the comparison.
	Consequence string `json:"consequence"`
}

// Text is the difference as printed: "different quantization: q4_K_M vs
// q8_0 — not a clean hardware comparison".
func (d Difference) Text() string {
	if !d.Known {
		return fmt.Sprintf("%s unchecked: %s vs %s — %s", d.Property, OrNotReported(d.A), OrNotReported(d.B), d.Consequence)
	}
	return fmt.Sprintf("different %s: %s vs %s — %s", d.Property, d.A, d.B, d.Consequence)
}

// KnownDifferences are the differences known to break a controlled
// comparison, as one line.
func (r *Result) KnownDifferences() string {
	var ds []string
	for _, d := range r.Differences {
		if d.Known {
			ds = append(ds, d.Text())
		}
	}
	return strings.Join(ds, "; ")
}

// OrNotReported is a property's value as printed, "(not reported)" when a
// run does not report it.
func OrNotReported(v string) string { return cmp.Or(v, "(not reported)") }

// Consequences of a difference, by what differs.
const (
	notHardware = "not a clean hardware comparison"
	notWorkload = "not the same workload: the runs timed different requests"
	notPolicy   = "not the same load policy: the same label is a different load"
	notChecked  = "only one run reports it, so it cannot be checked"
	notSameSim  = "a different simulated server: its figures are another model's, not a controlled comparison"
)

// controlled reports whether no controlled property is known to differ.
func controlled(ds []Difference) bool {
	return !slices.ContainsFunc(ds, func(d Difference) bool { return d.Known })
}

// Differences lists what two runs do not share of what a controlled
// comparison holds equal: the server's model, quantization, runtime and
// version, context length and sampling (as each server described itself),
// the requested model and API, the workload, the load policy and the time
// scale. la and lb are the loads each run measured.
func Differences(a, b *record.Run, la, lb []record.Load) []Difference {
	ds := []Difference{}
	if a == nil || b == nil {
		return append(ds, Difference{Property: "run context", Key: rundir.RunFile, A: present(a), B: present(b),
			Consequence: "a run without run.json says nothing of its server or workload, so nothing can be checked"})
	}
	ds = append(ds, serverDifferences(a.Target.Server, b.Target.Server)...)
	if a.Target.Simulated && b.Target.Simulated {
		ds = append(ds, simDifferences(a.Target.Server[record.ServerSimSettings], b.Target.Server[record.ServerSimSettings])...)
	}
	for _, p := range runProperties {
		va, vb := p.get(a), p.get(b)
		if p.key == "target.model" && slices.ContainsFunc(ds, func(d Difference) bool { return d.Property == "model" }) {
			continue // the servers' own model ids already say it
		}
		if va != vb {
			ds = append(ds, Difference{Property: p.name, Key: p.key, A: va, B: vb, Known: va != "" && vb != "",
				Consequence: unlessUnknown(va, vb, p.consequence(a, b))})
		}
	}
	if pa, pb := policy(la), policy(lb); pa != pb {
		ds = append(ds, Difference{Property: "load policy", Key: "points[].load", A: pa, B: pb, Known: true, Consequence: notPolicy})
	}
	return ds
}

func present(r *record.Run) string {
	if r == nil {
		return "(no run.json)"
	}
	return rundir.RunFile
}

func unlessUnknown(a, b, consequence string) string {
	if a == "" || b == "" {
		return notChecked
	}
	return consequence
}

// serverDifferences compares the controlled keys of two servers'
// self-descriptions (slo.ControlledProperty says which).
func serverDifferences(a, b map[record.ServerKey]string) []Difference {
	keys := map[record.ServerKey]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var ds []Difference
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if _, ok := slo.ControlledProperty(k); !ok || a[k] == b[k] {
			continue
		}
		ds = append(ds, Difference{Property: propertyName(k), Key: "target.server." + string(k), A: a[k], B: b[k],
			Known: a[k] != "" && b[k] != "", Consequence: unlessUnknown(a[k], b[k], notHardware)})
	}
	return ds
}

// simDifferences are the settings in which two runs' simulated servers
// differ (run.json target.server.sim_settings): each a different server,
// so no controlled comparison. A run that did not record them (older than
// the key) leaves them unchecked.
func simDifferences(a, b string) []Difference {
	var sa, sb map[string]string
	errA, errB := json.Unmarshal([]byte(a), &sa), json.Unmarshal([]byte(b), &sb)
	if errA != nil || errB != nil {
		if a == b {
			return nil
		}
		return []Difference{{Property: "simulator configuration", Key: "target.server." + string(record.ServerSimSettings),
			A: recorded(errA == nil), B: recorded(errB == nil), Consequence: notChecked}}
	}
	keys := map[string]bool{}
	for k := range sa {
		keys[k] = true
	}
	for k := range sb {
		keys[k] = true
	}
	var ds []Difference
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if sa[k] != sb[k] {
			ds = append(ds, Difference{Property: "simulator " + k, Key: "target.server." + string(record.ServerSimSettings) + "." + k,
				A: cmp.Or(sa[k], "(not set)"), B: cmp.Or(sb[k], "(not set)"), Known: true, Consequence: notSameSim})
		}
	}
	return ds
}

func recorded(ok bool) string {
	if ok {
		return "recorded"
	}
	return ""
}

// propertyName is a server key as people say it.
func propertyName(key record.ServerKey) string {
	names := map[record.ServerKey]string{record.ServerModelID: "model", record.ServerModelRoot: "model source",
		record.ServerModelRevision: "model revision", record.ServerRuntimeVersion: "runtime version", record.ServerMaxModelLen: "context length"}
	if n, ok := names[key]; ok {
		return n
	}
	return strings.ReplaceAll(string(key), "_", " ")
}

// runProperty is a property of run.json compared between runs.
type runProperty struct {
	name, key   string
	get         func(*record.Run) string
	consequence func(a, b *record.Run) string
}

func fixed(s string) func(a, b *record.Run) string { return func(_, _ *record.Run) string { return s } }

var runProperties = []runProperty{
	{"requested model", "target.model", func(r *record.Run) string { return r.Target.Model }, fixed(notHardware)},
	{"API", "target.api", func(r *record.Run) string { return r.Target.API }, fixed("the same requests were not sent the same way")},
	{"target kind", "target.simulated", func(r *record.Run) string {
		return map[bool]string{true: "simulated", false: "real server"}[r.Target.Simulated]
	},
		fixed("one side is the built-in simulator: its figures are a model's, not a server's")},
	{"prompt tokens", "prompt_tokens", func(r *record.Run) string { return r.PromptTokens }, fixed(notWorkload)},
	{"output tokens", "output_tokens", func(r *record.Run) string { return r.OutputTokens }, fixed(notWorkload)},
	{"ignore_eos", "ignore_eos", func(r *record.Run) string { return strconv.FormatBool(r.IgnoreEOS) }, fixed(notWorkload)},
	{"workload settings", "workload", workloadText, fixed(notWorkload)},
	{"time scale", "time_scale", func(r *record.Run) string { return strconv.FormatFloat(r.Scale(), 'g', -1, 64) }, timeScaleConsequence},
}

// workloadText is run.json's workload beyond the two lengths, as JSON.
func workloadText(r *record.Run) string {
	if r.Workload == nil {
		return "(plain synthetic)"
	}
	b, _ := json.Marshal(r.Workload)
	return string(b)
}

// timeScaleConsequence explains what a different time scale does: both
// runs are reported in model time, but whatever the client adds (its
// scheduling, parsing, the network) is multiplied by the faster run's scale.
func timeScaleConsequence(a, b *record.Run) string {
	return fmt.Sprintf("both are reported in model time, but the client's own overheads count %g times in A and %g times in B", a.Scale(), b.Scale())
}

// policy describes how a run's loads were applied: closed or open loop,
// and any cap on requests in flight.
func policy(ls []record.Load) string {
	var kinds []string
	for _, l := range ls {
		k := "closed loop"
		if l.Rate > 0 {
			k = "open loop"
			if l.MaxConcurrency > 0 {
				k += " capped at " + strconv.Itoa(l.MaxConcurrency) + " in flight"
			}
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	return strings.Join(kinds, ", ")
}
