package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// FormatCount writes a parameter count as "8.03 B" or "512.3 M".
func FormatCount(n int64) string {
	switch f := float64(n); {
	case f >= 1e9:
		return fmt.Sprintf("%.2f B", f/1e9)
	case f >= 1e6:
		return fmt.Sprintf("%.1f M", f/1e6)
	default:
		return fmt.Sprintf("%d", n)
	}
}

// FormatBytes writes a size in binary units, as engines log them.
func FormatBytes(n int64) string {
	f := float64(n)
	switch {
	case math.Abs(f) >= gib:
		return fmt.Sprintf("%.2f GiB", f/gib)
	case math.Abs(f) >= mib:
		return fmt.Sprintf("%.1f MiB", f/mib)
	case math.Abs(f) >= kib:
		return fmt.Sprintf("%.1f KiB", f/kib)
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// FormatInt writes an integer with thousands separators: 131,072.
func FormatInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// FormatSeconds writes a duration in seconds with sensible precision.
func FormatSeconds(s float64) string {
	switch {
	case math.IsInf(s, 1):
		return "∞"
	case s == 0:
		return "-"
	case s < 0.001:
		return fmt.Sprintf("%.0f µs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.0f ms", s*1e3)
	case s < 100:
		return fmt.Sprintf("%.2f s", s)
	default:
		return fmt.Sprintf("%.0f s", s)
	}
}

// sig rounds x to 6 significant digits, so that JSON output does not
// depend on the last bits floating-point contraction may change between
// platforms.
func sig(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return v
}

func roundTerms(t *Terms) {
	t.Memory, t.Compute, t.Comm, t.Overhead = sig(t.Memory), sig(t.Compute), sig(t.Comm), sig(t.Overhead)
}

func (p *Perf) round() {
	roundTerms(&p.Step)
	for _, f := range []*float64{&p.PrefillS, &p.TTFTP50S, &p.TTFTP95S, &p.TTFTBurstS, &p.StepS, &p.TPOTS, &p.DecodeTPS, &p.AggregateTPS, &p.E2ES} {
		*f = sig(*f)
	}
}
