package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/servebench/servebench/internal/slo"
	"github.com/servebench/servebench/internal/store"
)

// HistoryList prints stored runs one per line, as `servebench history`
// lists them: newest first, with the best aggregate throughput and the
// objective's verdict.
func HistoryList(w io.Writer, runs []store.Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tstarted (UTC)\ttarget\tmodel\tquantization\tpoints\tbest output tok/s\tobjective\tdirectory")
	for _, r := range runs {
		best := 0.0
		for _, p := range r.Points {
			best = max(best, p.OutputTPS)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.ID, day(r.Started), r.Target, r.Model,
			orDash(r.Quantization), len(r.Points), num(best, 1), objectiveCell(r), orDash(r.Dir))
	}
	return tw.Flush()
}

// day is an RFC 3339 instant to the minute, in UTC.
func day(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func objectiveCell(r store.Run) string {
	switch {
	case r.Holds == nil:
		return "-"
	case *r.Holds:
		return r.ObjectiveName + ": holds"
	case r.Conclusion == slo.ConclusionInconclusive:
		return r.ObjectiveName + ": INCONCLUSIVE"
	}
	return r.ObjectiveName + ": NOT MET"
}

// HistoryRun prints one stored run: its context, then a row per load
// point with its headline figures and verdict.
func HistoryRun(w io.Writer, d *store.Detail) error {
	var b strings.Builder
	fmt.Fprintf(&b, "run %d · started %s", d.ID, d.Started)
	if d.Ended != "" {
		fmt.Fprintf(&b, " · ended %s", d.Ended)
	}
	if d.Interrupted {
		b.WriteString(" · interrupted")
	}
	fmt.Fprintf(&b, " · servebench %s\n", d.ToolVersion)
	fmt.Fprintf(&b, "target %s (%s) · model %s%s\n", d.Target, d.API, d.Model, serverText(d.Server))
	if d.Quantization != "" || d.GPU != "" {
		fmt.Fprintf(&b, "quantization %s · GPU %s%s\n", orDash(d.Quantization), orDash(d.GPU), driverText(d.GPUDriver))
	}
	if len(d.Labels) > 0 {
		var l []string
		for _, k := range slices.Sorted(maps.Keys(d.Labels)) {
			l = append(l, k+"="+d.Labels[k])
		}
		fmt.Fprintf(&b, "labels %s\n", strings.Join(l, ", "))
	}
	fmt.Fprintf(&b, "workload %s %s\n", short(d.WorkloadHash), compact(d.Workload))
	if d.ObjectiveName != "" || len(d.Objective) > 0 {
		fmt.Fprintf(&b, "objective %s (%s): %s — %s\n", objectiveCell(d.Run), short(d.ObjectiveHash), d.ObjectiveName, orDash(d.Verdict))
	}
	if len(d.Flags) > 0 {
		fmt.Fprintf(&b, "command servebench %s\n", shellJoin(d.Flags))
	}
	fmt.Fprintf(&b, "directory %s\n\n", orDash(d.Dir))
	writeAligned(&b, historyRows(d.Points))
	_, err := io.WriteString(w, b.String())
	return err
}

func historyRows(ps []store.Point) [][]string {
	rows := [][]string{
		{"", "", "", "output tok/s", "TTFT ms", "", "ITL ms", "E2E ms", "speed tok/s/req", ""},
		{"load", "ok", "errors", "aggregate", "p50", "p95", "p95", "p95", "p50", "verdict"},
	}
	for _, p := range ps {
		verdict := "-"
		if p.Pass != nil {
			verdict = map[bool]string{true: "pass", false: "FAIL"}[*p.Pass]
		}
		if pointInconclusive(p) {
			verdict = "INCONCLUSIVE"
		}
		errs := strconv.Itoa(p.Failed)
		if p.Failed > 0 {
			errs += fmt.Sprintf(" (%s%%)", num(100*p.ErrorRate, 1))
		}
		rows = append(rows, []string{p.Label, strconv.Itoa(p.Completed), errs, num(p.OutputTPS, 1),
			opt(p.TTFTP50MS, 0), opt(p.TTFTP95MS, 0), opt(p.ITLP95MS, 1), opt(p.E2EP95MS, 0), opt(p.SpeedP50, 1), verdict})
	}
	return rows
}

func opt(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return num(*v, prec)
}

func serverText(s store.Server) string {
	var parts []string
	if s.Runtime != "" {
		parts = append(parts, strings.TrimSpace(s.Runtime+" "+s.RuntimeVersion))
	}
	if s.ModelID != "" {
		parts = append(parts, "model id "+s.ModelID)
	}
	if s.MaxContext > 0 {
		parts = append(parts, fmt.Sprintf("max context %d", s.MaxContext))
	}
	if len(parts) == 0 {
		return ""
	}
	return " · server: " + strings.Join(parts, ", ")
}

func driverText(d string) string {
	if d == "" {
		return ""
	}
	return " (driver " + d + ")"
}

// short is a hash cut to what a person compares by eye.
func short(h string) string {
	if len(h) > len("sha256:")+12 {
		return h[:len("sha256:")+12]
	}
	return h
}

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// shellJoin quotes the arguments a shell would split or expand, so that
// the command printed can be pasted back.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// pointInconclusive reads a stored point's verdict: its load's evidence
// was invalid (slo.PointVerdict.Validity), unless failing for reasons no
// load explains.
func pointInconclusive(p store.Point) bool {
	if len(p.Verdict) == 0 {
		return false
	}
	var pv slo.PointVerdict
	if json.Unmarshal(p.Verdict, &pv) != nil {
		return false
	}
	return pv.Failing == "" && pv.Inconclusive()
}
