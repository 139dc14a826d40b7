package metrics

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
)

// TestTable checks each row against summary.json: the field it names
// holds the value its accessor reads, it has exactly one accessor, its
// names are unique, and something outside this package reads it (an
// objective by name, or report's CSV).
func TestTable(t *testing.T) {
	// A point whose every distribution has a distinct count, and whose
	// one-number fields are distinct, so a wrong accessor shows.
	var pt PointSummary
	v := reflect.ValueOf(&pt).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Type() == reflect.TypeFor[stats.Dist]() {
			f.Set(reflect.ValueOf(stats.Dist{Count: 100 + i}))
		}
	}
	pt.ErrorRate, pt.OutputTPS = 0.25, 1234
	pt.PrefixCache = &PrefixCache{HitRate: 0.375, PromptTokens: 8, Requests: 2, TTFTHit: stats.Dist{Count: 7}, TTFTMiss: stats.Dist{Count: 9}}
	pt.Requests = Requests{Completed: 6, Failed: 2, Errors: map[string]int{record.ClassOOM: 1, record.ClassHTTP5xx: 1}}
	raw, err := json.Marshal(pt)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if m, ok := LookupMetric(""); ok {
		t.Errorf("the empty name looks up %s, a row no objective can name", m.Field)
	}
	seen := map[string]bool{}
	for _, m := range Table {
		for _, name := range append([]string{m.Name, m.Field}, m.Aliases...) {
			if name != "" && name != m.Field && seen[name] {
				t.Errorf("%s: %q names two rows", m.Field, name)
			}
			seen[name] = true
		}
		if m.Name == "" && !m.CSV {
			t.Errorf("%s: no objective names it and no report shows it", m.Field)
		}
		field := jsonPath(doc, m.Field)
		switch {
		case field == nil:
			t.Errorf("%s: summary.json has no such field", m.Field)
		case (m.Dist == nil) == (m.Value == nil):
			t.Errorf("%s: needs exactly one of Dist and Value", m.Field)
		case m.Dist != nil:
			if got, want := m.Dist(&pt).Count, field.(map[string]any)["count"]; float64(got) != want {
				t.Errorf("%s: Dist reads count %d, the field has %v", m.Field, got, want)
			}
		default:
			if got, _ := m.Value(&pt); got != field.(float64) {
				t.Errorf("%s: Value reads %v, the field has %v", m.Field, got, field)
			}
		}
	}
}

// jsonPath follows a dotted path such as "requests.errors.out_of_memory".
func jsonPath(doc map[string]any, path string) any {
	var cur any = doc
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}
