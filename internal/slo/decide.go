package slo

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/record"
)

// Outcome is one candidate measured against the objective.
type Outcome struct {
	Candidate Candidate `json:"candidate"`
	// Server is what the server said about itself (backend.Describe).
	Server  map[record.ServerKey]string `json:"server"`
	Verdict *Verdict                    `json:"verdict"`
	// Binding lists the SLOs that failed first above the capacity: what
	// limits this candidate.
	Binding []string `json:"binding_slos"`
	// Error is why the candidate could not be measured.
	Error string `json:"error,omitempty"`
	// MemoryBytes is the memory the candidate was measured to hold at its
	// peak (a sweep's configuration: its GPU memory, else its server's RSS;
	// 0 when not known). Candidates whose peaks are within MemoryBand of
	// the least of them rank as equal: a peak varies by a few percent from
	// run to run, and a recommendation must not turn on that.
	MemoryBytes float64 `json:"memory_bytes,omitempty"`
	// Order is the candidate's place in the order the user gave (a
	// sweep's configurations), the last tie-break before the name.
	Order int `json:"-"`
}

// MemoryBand is the relative width within which measured memory peaks
// count as equal when candidates are ranked: peaks are put in bands of
// ×1.1 counted from the least of them, and compared by band.
const MemoryBand = 0.1

// Meets reports whether the candidate meets the objective at its target
// load.
func (o Outcome) Meets() bool { return o.Error == "" && o.Verdict != nil && o.Verdict.Holds }

// Decision is the result of `servebench decide` (its --json output).
type Decision struct {
	Objective *Objective `json:"objective"`
	Outcomes  []Outcome  `json:"candidates"`
	// Recommended names the least complex candidate that meets the
	// objective at the target load ("" when none does); Why says why.
	Recommended string `json:"recommended"`
	Why         string `json:"why"`
	// Inconclusive names the candidates whose verdict rests on invalid
	// evidence (Verdict.Inconclusive): they are neither ranked nor ruled
	// out. With no recommendation, decide then exits 4, not 3.
	Inconclusive []string `json:"inconclusive"`
	// Differences between the servers that their labels do not declare.
	Differences []Difference `json:"differences"`
}

// Difference is a property that differs between candidates' servers.
type Difference struct {
	Key    record.ServerKey  `json:"key"`
	Values map[string]string `json:"values"` // candidate → value
	// Controlled is true when the candidates' labels declare a difference
	// that explains it (a "quantization" label for the quantization).
	Controlled bool   `json:"controlled"`
	Label      string `json:"label"`
}

// compared are the self-described properties compared between candidates,
// with the label that, when it differs, declares the difference.
var compared = []struct {
	prefix record.ServerKey
	label  string
}{
	{record.ServerModelID, "model"}, {record.ServerModelRoot, "model"}, {record.ServerModelRevision, "model"},
	{record.ServerQuantization, "quantization"}, {record.ServerRuntime, "runtime"}, {record.ServerRuntimeVersion, "runtime"},
	{record.ServerMaxModelLen, "context"}, {record.ServerSampling, "sampling"},
}

// Decide ranks the outcomes: among candidates that meet the objective,
// the fewest GPUs (label gpus), then the lowest cost (label cost), then by
// the objective's priority (throughput: the higher capacity;
// responsiveness: the lower mean E2E at the target load), then by name.
// Candidates without a gpus or cost label rank after those with one.
func Decide(o *Objective, outs []Outcome) *Decision {
	d := &Decision{Objective: o, Outcomes: outs, Differences: differences(outs), Inconclusive: []string{}}
	var ok []Outcome
	for _, x := range outs {
		if x.Meets() {
			ok = append(ok, x)
		}
		if x.Error == "" && x.Verdict != nil && x.Verdict.Inconclusive {
			d.Inconclusive = append(d.Inconclusive, x.Candidate.Name)
		}
	}
	unjudged := ""
	if len(d.Inconclusive) > 0 {
		unjudged = "; " + strings.Join(d.Inconclusive, ", ") + " INCONCLUSIVE (its evidence is invalid), so not ranked"
	}
	if len(ok) == 0 {
		d.Why = "no candidate meets the objective at its target load" + unjudged
		return d
	}
	least := 0.0 // the least peak memory known among them: the bands' anchor
	for _, x := range ok {
		if x.MemoryBytes > 0 && (least == 0 || x.MemoryBytes < least) {
			least = x.MemoryBytes
		}
	}
	slices.SortStableFunc(ok, func(a, b Outcome) int { return rank(o, least, a, b) })
	best := ok[0]
	d.Recommended = best.Candidate.Name
	d.Why = why(best, len(ok), len(outs)) + unjudged
	return d
}

func rank(o *Objective, least float64, a, b Outcome) int {
	return cmp.Or(cmpLabel(a, b, "gpus"), cmpMemory(least, a, b), cmpLabel(a, b, "cost"), cmpPriority(o, a, b),
		cmp.Compare(a.Order, b.Order), cmp.Compare(a.Candidate.Name, b.Candidate.Name))
}

// cmpMemory orders by measured peak memory, in bands of ×(1+MemoryBand)
// counted from the least peak among the candidates: every peak within
// 10% of the least ties with it. A candidate whose peak is not known
// ranks as equal to any other.
func cmpMemory(least float64, a, b Outcome) int {
	if a.MemoryBytes <= 0 || b.MemoryBytes <= 0 {
		return 0
	}
	band := func(m float64) int { return int(math.Floor(math.Log(m/least) / math.Log1p(MemoryBand))) }
	return cmp.Compare(band(a.MemoryBytes), band(b.MemoryBytes))
}

// cmpLabel orders by a numeric label, missing last.
func cmpLabel(a, b Outcome, label string) int {
	x, okx := a.Candidate.Number(label)
	y, oky := b.Candidate.Number(label)
	switch {
	case okx && oky:
		return cmp.Compare(x, y)
	case okx:
		return -1
	case oky:
		return 1
	}
	return 0
}

func cmpPriority(o *Objective, a, b Outcome) int {
	if o.Priority == PriorityThroughput {
		return cmp.Compare(capacityValue(b), capacityValue(a))
	}
	return cmp.Compare(e2eAtTarget(a), e2eAtTarget(b))
}

func capacityValue(x Outcome) float64 {
	if c := x.Verdict.Capacity; c.Load != nil {
		return LoadValue(*c.Load)
	}
	return 0
}

func e2eAtTarget(x Outcome) float64 {
	if pv, ok := findLoad(x.Verdict.Points, x.Verdict.TargetLoad); ok && pv.E2EMeanMS != nil {
		return *pv.E2EMeanMS
	}
	return math.Inf(1)
}

func why(best Outcome, meeting, total int) string {
	c := best.Candidate
	s := fmt.Sprintf("%s meets the objective at %s", c.Name, best.Verdict.TargetLoad.Text(record.LoadLong))
	if l := best.Verdict.Capacity.Load; l != nil {
		s += fmt.Sprintf(" (capacity %s)", l.Text(record.LoadLong))
	}
	var basis []string
	if g, ok := c.Number("gpus"); ok {
		basis = append(basis, fmt.Sprintf("%g GPU(s)", g))
	}
	if best.MemoryBytes > 0 {
		basis = append(basis, fmt.Sprintf("peak memory %.2f GiB", best.MemoryBytes/(1<<30)))
	}
	if v, ok := c.Number("cost"); ok {
		basis = append(basis, fmt.Sprintf("cost %g", v))
	}
	if meeting > 1 && len(basis) > 0 {
		s += " with the least complexity among the " + fmt.Sprint(meeting) + " that do: " + strings.Join(basis, ", ")
	} else if meeting == 1 && total > 1 {
		s += "; it is the only candidate that does"
	}
	return s
}

// differences finds the self-described properties whose reported values
// differ between candidates.
func differences(outs []Outcome) []Difference {
	keys := map[record.ServerKey]bool{}
	for _, x := range outs {
		for k := range x.Server {
			keys[k] = true
		}
	}
	var out []Difference
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		label, ok := ControlledProperty(k)
		if !ok {
			continue
		}
		vals := map[string]string{}
		distinct := map[string]bool{}
		for _, x := range outs {
			if v, ok := x.Server[k]; ok && v != "" {
				vals[x.Candidate.Name], distinct[v] = v, true
			}
		}
		if len(distinct) < 2 {
			continue
		}
		out = append(out, Difference{Key: k, Values: vals, Label: label, Controlled: labelDiffers(outs, label)})
	}
	return out
}

// ControlledProperty reports whether a key of a server's self-description
// (run.json target.server) is one a controlled comparison holds equal, and
// the label that declares a difference in it (model, quantization,
// runtime, context, sampling).
func ControlledProperty(key record.ServerKey) (label string, ok bool) {
	for _, c := range compared {
		if key == c.prefix || (strings.HasSuffix(string(c.prefix), ".") && strings.HasPrefix(string(key), string(c.prefix))) {
			return c.label, true
		}
	}
	return "", false
}

func labelDiffers(outs []Outcome, label string) bool {
	seen := map[string]bool{}
	for _, x := range outs {
		seen[x.Candidate.Labels[label]] = true
	}
	return len(seen) > 1
}
