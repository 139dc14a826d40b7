// Package enginecheck holds servebench's measurements against a real
// engine's own account of the same requests. It reads the records of one or
// more runs and checks what must hold if the client measured honestly:
//
//   - every request finished, with no error and at least one token;
//   - for Ollama's native API, which reports server-side timings: the client's
//     TTFT (first_token_ns − sent_ns) is at least the server's
//     prompt_eval_duration (the server cannot send a token before it has read
//     the prompt), and the client's output count equals the server's
//     eval_count;
//   - at concurrency 1, the client's decode speed agrees with the server's.
//
// Decode speed of one request, client side: (output_tokens − 1) /
// (end_ns − first_token_ns), the tokens that arrived after the first over the
// time they took. Server side: eval_count / eval_duration, Ollama's figure.
// Ollama counts the first token in eval_count but its time in
// prompt_eval_duration, so its figure reads n/(n−1) high (1.6% at 64 tokens),
// and it leaves out the time between its batches, which the client sees; the
// tolerance covers both. Medians over a load point's measured requests are
// compared, so one slow request cannot fail the check.
//
// It renders its own output (Render). Product packages return values and
// internal/report renders them; this rig is not the product, and its
// verdict should not be printed by the code it checks.
package enginecheck

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/stats"
)

// DefaultDecodeTolerance is the largest relative difference allowed between
// client and server median decode speeds: wide enough for the definitional
// differences above, narrow enough to catch a client that times chunks wrong
// (buffering, a role-only first chunk) or counts tokens wrong.
const DefaultDecodeTolerance = 0.10

// Options tune the checks. The zero value checks with the defaults.
type Options struct {
	// DecodeTolerance is relative: 0.10 allows ±10%. 0 means the default.
	DecodeTolerance float64
	// WantRequests, when positive, is the number of measured requests each
	// load point must have recorded.
	WantRequests int
}

// Group is one load point of one run: the unit every check reports on.
type Group struct {
	Dir     string
	API     string
	Point   int
	Load    record.Load
	Records []record.Record
	// Filled by the checks.
	Measured     int
	Native       bool    // the records carry server timings (Ollama's native API)
	ClientDecode float64 // median tok/s; NaN when not compared
	ServerDecode float64
	Problems     []string
}

// Result is the outcome of a check over all run directories.
type Result struct {
	Groups []*Group
	// Problems that belong to no single group.
	Problems []string
	// Warnings say what reading the runs passed over (damaged lines,
	// duplicated records, a damaged run.json), as servebench report does.
	Warnings []string
}

// OK reports whether every check passed.
func (r *Result) OK() bool {
	if len(r.Problems) > 0 {
		return false
	}
	for _, g := range r.Groups {
		if len(g.Problems) > 0 {
			return false
		}
	}
	return true
}

// Check reads each directory's records and checks them. An error means a
// directory could not be read at all; failed checks are in the Result.
func Check(dirs []string, o Options) (*Result, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no run directories given")
	}
	if o.DecodeTolerance == 0 {
		o.DecodeTolerance = DefaultDecodeTolerance
	}
	res := &Result{}
	for _, dir := range dirs {
		groups, err := readGroups(dir, func(w string) { res.Warnings = append(res.Warnings, w) })
		if err != nil {
			return nil, err
		}
		if len(groups) == 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("%s: no records: the run recorded no request", dir))
		}
		for _, g := range groups {
			g.check(o)
		}
		res.Groups = append(res.Groups, groups...)
	}
	compared := slices.ContainsFunc(res.Groups, func(g *Group) bool { return !math.IsNaN(g.ClientDecode) })
	if !compared {
		res.Problems = append(res.Problems, "no load point at concurrency 1 with server timings "+
			"(Ollama's native API): the decode-speed check compared nothing")
	}
	return res, nil
}

// readGroups reads dir's records as every reader of a run directory reads
// them (rundir.Records: damaged lines skipped with a warning, duplicates
// dropped, a sped-up simulator's times in model time), and splits them by
// load point and API.
func readGroups(dir string, warn func(string)) ([]*Group, error) {
	var groups []*Group
	index := map[string]*Group{}
	_, err := rundir.Records(dir, warn, func(rec *record.Record) {
		r := *rec
		key := fmt.Sprintf("%d/%s", r.Point, r.API)
		g := index[key]
		if g == nil {
			g = &Group{Dir: dir, API: r.API, Point: r.Point, Load: r.Load}
			index[key] = g
			groups = append(groups, g)
		}
		g.Records = append(g.Records, r)
	})
	if err != nil {
		return nil, fmt.Errorf("reading run %s: %w", dir, err)
	}
	return groups, nil
}

// check runs every check on g and notes its problems.
func (g *Group) check(o Options) {
	g.ClientDecode, g.ServerDecode = math.NaN(), math.NaN()
	g.Native = strings.HasPrefix(g.API, "ollama") ||
		slices.ContainsFunc(g.Records, func(r record.Record) bool { return r.Server != nil })
	p := &problems{}
	for i := range g.Records {
		r := &g.Records[i]
		if r.Phase == record.PhaseMeasured {
			g.Measured++
		}
		checkRecord(p, r, g.Native)
	}
	if o.WantRequests > 0 && g.Measured != o.WantRequests {
		p.add("requests", fmt.Sprintf("%d measured requests recorded, want %d", g.Measured, o.WantRequests))
	}
	if g.Measured == 0 {
		p.add("requests", "no measured request")
	}
	if g.Native && g.Load.Concurrency == 1 {
		g.compareDecode(p, o.DecodeTolerance)
	}
	g.Problems = p.list()
}

// checkRecord checks one request.
func checkRecord(p *problems, r *record.Record, native bool) {
	id := fmt.Sprintf("request %d", r.ID)
	if r.Error != nil {
		p.add("errors", fmt.Sprintf("%s failed: %s: %s", id, r.Error.Class, r.Error.Message))
		return
	}
	if r.FirstTokenNS == 0 || r.OutputTokens <= 0 {
		p.add("tokens", fmt.Sprintf("%s: no output token recorded", id))
		return
	}
	if !native {
		return
	}
	s := r.Server
	if s == nil {
		p.add("server", fmt.Sprintf("%s: no server timings in the record (Ollama's final chunk)", id))
		return
	}
	if ttft, _ := metrics.TTFT(r); ttft < float64(s.PromptEvalDuration)/1e6 {
		p.add("ttft", fmt.Sprintf("%s: client TTFT %.1f ms is less than the server's prompt_eval_duration %.1f ms",
			id, ttft, float64(s.PromptEvalDuration)/1e6))
	}
	if r.OutputTokens != s.EvalCount {
		p.add("counts", fmt.Sprintf("%s: %d output tokens recorded, the server says eval_count %d",
			id, r.OutputTokens, s.EvalCount))
	}
}

// compareDecode compares median client and server decode speeds over the
// measured requests that have both.
func (g *Group) compareDecode(p *problems, tol float64) {
	var client, server []float64
	for _, r := range g.Records {
		if r.Phase != record.PhaseMeasured || r.Error != nil || r.Server == nil {
			continue
		}
		c, okc := metrics.DecodeSpeed(&r)
		s, oks := metrics.ServerDecodeSpeed(r.Server)
		if okc && oks {
			client, server = append(client, c), append(server, s)
		}
	}
	if len(client) == 0 {
		p.add("decode", "no measured request with two or more tokens and server timings to compare decode speed")
		return
	}
	slices.Sort(client)
	slices.Sort(server)
	g.ClientDecode, g.ServerDecode = stats.Quantile(client, 0.5), stats.Quantile(server, 0.5)
	if d := g.ClientDecode/g.ServerDecode - 1; math.Abs(d) > tol {
		p.add("decode", fmt.Sprintf("median client decode %.1f tok/s differs from the server's %.1f tok/s by %+.1f%% (tolerance ±%.0f%%)",
			g.ClientDecode, g.ServerDecode, 100*d, 100*tol))
	}
}

// problems collects failures per check, keeping the first few of each so
// that a run of 500 bad requests gives a readable report.
type problems struct {
	order []string
	by    map[string][]string
	count map[string]int
}

const maxPerCheck = 5

func (p *problems) add(check, msg string) {
	if p.by == nil {
		p.by, p.count = map[string][]string{}, map[string]int{}
	}
	if p.count[check] == 0 {
		p.order = append(p.order, check)
	}
	p.count[check]++
	if len(p.by[check]) < maxPerCheck {
		p.by[check] = append(p.by[check], msg)
	}
}

func (p *problems) list() []string {
	var out []string
	for _, c := range p.order {
		for _, m := range p.by[c] {
			out = append(out, c+": "+m)
		}
		if n := p.count[c] - len(p.by[c]); n > 0 {
			out = append(out, fmt.Sprintf("%s: … and %d more", c, n))
		}
	}
	return out
}
