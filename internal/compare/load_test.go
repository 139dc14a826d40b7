package compare

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
)

// recordsFile writes recs as a records file with a damaged last line, so
// that reading it warns.
func recordsFile(t *testing.T, recs []*record.Record) string {
	t.Helper()
	var b bytes.Buffer
	w := record.NewWriter(&b)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString("{\"schema\":\n")
	path := filepath.Join(t.TempDir(), rundir.RecordsFile)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Both reads both sides at once, yet says what each warned of side A
// first; ReadSide pools a side's runs as repeats: each run its own point.
func TestBothWarnsInOrderAndReadSidePoolsRuns(t *testing.T) {
	a1, a2 := recordsFile(t, series(20, constant(50), constant(10))), recordsFile(t, series(20, constant(50), constant(10)))
	b := recordsFile(t, series(20, constant(60), constant(10)))
	paths := [2][]RunPath{{{"a1", a1}, {"a2", a2}}, {{b, b}}}
	var sides [2]*Side
	var warned []string
	observed := 0
	read := func(i int, warn func(string)) (err error) {
		o := rundir.Options{Warn: warn}
		if i == 0 {
			o.Observe = func(*record.Record) { observed++ }
		}
		sides[i], _, err = ReadSide(paths[i], o, func(path string, o rundir.Options) (*metrics.Summary, any, error) {
			s, err := rundir.Summarize(path, nil, o)
			return s, nil, err
		})
		return err
	}
	if err := Both(read, func(w string) { warned = append(warned, w) }); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 3 || !strings.Contains(warned[0], a1) || !strings.Contains(warned[1], a2) || !strings.Contains(warned[2], b) {
		t.Errorf("warnings %q; want a1's, a2's, then b's", warned)
	}
	a := sides[0]
	if a.Name != "run a1 ("+a1+"), run a2 ("+a2+")" || len(a.Dirs) != 2 || len(a.Summary.Points) != 2 {
		t.Errorf("side A: name %q, dirs %q, %d points; want both runs named, resolved and pooled as 2 points", a.Name, a.Dirs, len(a.Summary.Points))
	}
	if observed != 40 {
		t.Errorf("side A's observer saw %d records, want both runs' 40", observed)
	}
	paths[0] = []RunPath{{"x", filepath.Join(t.TempDir(), "missing")}}
	warned = nil
	if err := Both(read, func(w string) { warned = append(warned, w) }); err == nil || len(warned) != 0 {
		t.Errorf("a side A that cannot be read: error %v after warnings %q; want an error before B's warnings", err, warned)
	}
}
