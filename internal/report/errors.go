package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/metrics"
)

// sampleMax bounds a sample error message: enough for a server's reason,
// short enough to keep the list readable.
const sampleMax = 200

// errorClass is one error class over the whole run.
type errorClass struct {
	name   string
	total  int
	points []string // "c=4: 12"
	sample string
}

// runErrors gathers the run's errors by class, most frequent first; each
// class keeps the sample message of the first point that had it.
func runErrors(s *metrics.Summary) []errorClass {
	all := map[string]int{}
	for i := range s.Points {
		for c, n := range s.Points[i].Requests.Errors {
			all[c] += n
		}
	}
	var out []errorClass
	for _, c := range metrics.ErrorClasses(all) {
		ec := errorClass{name: c, total: all[c]}
		for i := range s.Points {
			p := &s.Points[i]
			n := p.Requests.Errors[c]
			if n == 0 {
				continue
			}
			ec.points = append(ec.points, LoadLabel(p)+": "+strconv.Itoa(n))
			if ec.sample == "" {
				ec.sample = p.Requests.ErrorSamples[c]
			}
		}
		out = append(out, ec)
	}
	return out
}

// writeErrors lists the run's errors under the table: each class with its
// count per point and one sample message, so the reason for a failure is
// on screen, not only in records.jsonl.
func writeErrors(b *strings.Builder, s *metrics.Summary, bullet string) {
	errs := runErrors(s)
	if len(errs) == 0 {
		return
	}
	b.WriteString("\nErrors by class (measured requests; docs/OUTPUT.md lists the classes):\n")
	for _, e := range errs {
		fmt.Fprintf(b, "%s%s %d (%s)", bullet, e.name, e.total, strings.Join(e.points, ", "))
		if e.sample != "" {
			fmt.Fprintf(b, ", e.g. %s", strconv.Quote(clip(e.sample, sampleMax)))
		}
		b.WriteString("\n")
	}
}

// errorList is the CSV cell of a point's errors: "connect:60;http_4xx:4".
func errorList(errs map[string]int) string {
	parts := make([]string, 0, len(errs))
	for _, c := range metrics.ErrorClasses(errs) {
		parts = append(parts, c+":"+strconv.Itoa(errs[c]))
	}
	return strings.Join(parts, ";")
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}
