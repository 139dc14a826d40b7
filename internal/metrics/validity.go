package metrics

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/telemetry"
)

// Why a point's figures cannot carry a conclusion (docs/METRICS.md,
// "Validity"): short stable codes, read by slo, report, store and compare.
const (
	// InvalidSimBehind: the built-in simulator skipped model time because
	// its host ran it behind its clock.
	InvalidSimBehind = "sim_behind"
	// InvalidClientSaturated: the load generator's CPU or dispatch lag
	// crossed its saturation thresholds.
	InvalidClientSaturated = "client_saturated"
	// InvalidLoadNotHeld: the point did not hold its nominal load.
	InvalidLoadNotHeld = "load_not_held"
	// InvalidServerEvent: the server restarted, ran out of memory or
	// exited during the point.
	InvalidServerEvent = "server_event"
	// InvalidFewSamples: a percentile judged rests on fewer samples than
	// it needs (stats.MinSamples); slo adds it per SLO judged.
	InvalidFewSamples = "few_samples"
)

// serverEvents are the telemetry events that make a point's figures
// those of a server that stopped or started over during it.
var serverEvents = []string{telemetry.EventServerRestart, telemetry.EventOOM, telemetry.EventServerExit}

// Reason is one cause of a point's invalidity: a stable code and the
// words a person reads.
type Reason struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

func (r Reason) String() string { return r.Code + ": " + r.Text }

// Validity is whether a point's figures can carry a conclusion (a verdict,
// a capacity, a saturation point, a comparison). The zero value is valid.
type Validity struct {
	Reasons []Reason
}

// Valid reports whether no reason invalidates the point.
func (v Validity) Valid() bool { return len(v.Reasons) == 0 }

// Add appends a reason, keeping one per code (the first).
func (v *Validity) Add(r Reason) {
	if !v.Has(r.Code) {
		v.Reasons = append(v.Reasons, r)
	}
}

// Has reports whether a reason of this code is present.
func (v Validity) Has(code string) bool {
	for _, r := range v.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}

// Merge adds every reason of o.
func (v *Validity) Merge(o Validity) {
	for _, r := range o.Reasons {
		v.Add(r)
	}
}

// Without returns the validity less the reasons of the given codes.
func (v Validity) Without(codes ...string) Validity {
	var out Validity
	for _, r := range v.Reasons {
		if !slices.Contains(codes, r.Code) {
			out.Reasons = append(out.Reasons, r)
		}
	}
	return out
}

// String lists the reasons, "code: words; code: words"; "" when valid.
func (v Validity) String() string {
	parts := make([]string, len(v.Reasons))
	for i, r := range v.Reasons {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}

// Codes lists the reasons' codes.
func (v Validity) Codes() []string {
	out := make([]string, len(v.Reasons))
	for i, r := range v.Reasons {
		out[i] = r.Code
	}
	return out
}

type validityJSON struct {
	Valid   bool     `json:"valid"`
	Reasons []Reason `json:"reasons"`
}

// MarshalJSON writes {"valid": ..., "reasons": [...]}.
func (v Validity) MarshalJSON() ([]byte, error) {
	return json.Marshal(validityJSON{Valid: v.Valid(), Reasons: append([]Reason{}, v.Reasons...)})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (v *Validity) UnmarshalJSON(b []byte) error {
	var j validityJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	v.Reasons = j.Reasons
	return nil
}

// qualify sets every point's validity from its summary and the run:
// whether it held its load, whether the client was saturated, whether
// the simulator fell behind and whether the server restarted, ran out of
// memory or exited. Called again when telemetry is added.
func (s *Summary) qualify() {
	cpus := 0
	if s.Run != nil {
		cpus = s.Run.ClientCPUs
	}
	for i := range s.Points {
		p := &s.Points[i]
		p.Validity = Validity{}
		if r, ok := p.notHeldReason(); ok {
			p.Validity.Add(r)
		}
		if r, ok := clientReason(p.Client, cpus); ok {
			p.Validity.Add(r)
		}
		if r, ok := s.simReason(p); ok {
			p.Validity.Add(r)
		}
		if r, ok := eventReason(p.Telemetry); ok {
			p.Validity.Add(r)
		}
	}
}

// notHeldReason: a point that measured something, not all failed, and did
// not hold its load (docs/METRICS.md, Achieved load).
func (p *PointSummary) notHeldReason() (Reason, bool) {
	measured := p.Requests.Completed + p.Requests.Failed
	if measured == 0 || p.LoadHeld || p.AllFailed {
		return Reason{}, false
	}
	if p.Load.Rate > 0 {
		return Reason{InvalidLoadNotHeld, fmt.Sprintf("%.3g req/s sent of the %.3g offered", p.AchievedRate, p.OfferedRate)}, true
	}
	return Reason{InvalidLoadNotHeld, fmt.Sprintf("%.1f of %d users in flight on average, at least 90%% of them for %.0f%% of the window",
		p.ConcurrencyAchieved, p.Load.Concurrency, 100*p.ConcurrencyHeldShare)}, true
}

func clientReason(c *record.ClientStats, cpus int) (Reason, bool) {
	if c == nil {
		return Reason{}, false
	}
	busy, late := clientSaturated(*c, cpus)
	var why []string
	if busy {
		why = append(why, fmt.Sprintf("the client used %.0f%% CPU (of one core) %s", c.CPUPercent, onCores(cpus)))
	}
	if late {
		why = append(why, fmt.Sprintf("its dispatch lag p99 was %.1f ms", c.LagP99MS))
	}
	if len(why) == 0 {
		return Reason{}, false
	}
	return Reason{InvalidClientSaturated, strings.Join(why, ", ")}, true
}

// simReason: the simulator skipped at least simLostWarnFraction of the
// point's model time.
func (s *Summary) simReason(p *PointSummary) (Reason, bool) {
	lost, window, ok := s.simLost(p)
	if ok && window > 0 && lost >= simLostWarnFraction*window {
		return Reason{InvalidSimBehind, fmt.Sprintf("the simulator fell behind its clock at time scale %g and skipped %.1f%% of the point's model time",
			s.Run.Scale(), 100*lost/window)}, true
	}
	return Reason{}, false
}

// simLost is the model time (ms) the built-in simulator skipped over
// point p, and the point's measured window (model ms): the larger of what
// telemetry saw inside the window and what run.json read from the
// simulator at the point's bounds (which the telemetry of a short point,
// or none, misses). ok is false when neither is known.
func (s *Summary) simLost(p *PointSummary) (lost, window float64, ok bool) {
	if s.Run == nil {
		return 0, 0, false
	}
	for _, pc := range s.Run.Points {
		if pc.Index != p.Index || pc.Span.Empty() {
			continue
		}
		window = float64(pc.EndNS-pc.StartNS) / 1e6 * s.Run.Scale()
		if pc.SimClockLostMS != nil {
			lost, ok = *pc.SimClockLostMS, true
		}
		if t := p.Telemetry; t != nil && t.Server != nil && t.Server.SimClockLostMS != nil {
			lost, ok = max(lost, *t.Server.SimClockLostMS), true
		}
		return lost, window, ok
	}
	return 0, 0, false
}

func eventReason(t *telemetry.Point) (Reason, bool) {
	if t == nil {
		return Reason{}, false
	}
	var seen []string
	for _, k := range serverEvents {
		if n := t.Events[k]; n > 0 {
			seen = append(seen, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(seen) == 0 {
		return Reason{}, false
	}
	return Reason{InvalidServerEvent, "telemetry saw " + strings.Join(seen, ", ") + " during the point"}, true
}
