package launch

import (
	"reflect"
	"testing"
)

func TestConfigsCrossProduct(t *testing.T) {
	ps := []Param{{"seqs", []string{"8", "16"}}, {"kv", []string{"auto", "fp8"}}}
	cs, err := Configs(ps)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Name())
	}
	// the first parameter varies slowest
	want := []string{"seqs-8_kv-auto", "seqs-8_kv-fp8", "seqs-16_kv-auto", "seqs-16_kv-fp8"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if cs[3].String() != "seqs=16 kv=fp8" {
		t.Errorf("String() = %q", cs[3].String())
	}
	if none, _ := Configs(nil); len(none) != 1 || none[0].Name() != "default" {
		t.Errorf("no parameters: %v, want one default configuration", none)
	}
	if _, err := Configs([]Param{{"a", []string{"1"}}, {"a", []string{"2"}}}); err == nil {
		t.Error("a parameter given twice: no error")
	}
}

func TestParseParam(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Param
		ok   bool
	}{
		{"seqs=8, 16 ,32", Param{"seqs", []string{"8", "16", "32"}}, true},
		{"model=org/m-7b", Param{"model", []string{"org/m-7b"}}, true},
		{"seqs", Param{}, false},       // no values
		{"seqs=8,,16", Param{}, false}, // an empty value
		{"port=1,2", Param{}, false},   // the sweep's own placeholder
		{"9x=1", Param{}, false},       // not a name
		{"a b=1", Param{}, false},      // not a name
	} {
		got, err := ParseParam(c.in)
		if (err == nil) != c.ok || c.ok && !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseParam(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestExpandList(t *testing.T) {
	vals := map[string]string{"seqs": "8", "tp": "2"}
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		// 1, the expected load and overload follow the configuration
		{"1,{seqs},{seqs}*2", "1,8,16", true},
		{"{seqs}/2, {seqs}*{tp}+1", "4,17", true},
		{"0.5,{seqs}*0.25", "0.5,2", true},
		{"{seqs}-1", "7", true},
		{"1e1", "10", true},
		{"{seqs}/0", "", false},
		{"{nope}", "", false},
		{"two", "", false},
	} {
		got, err := ExpandList(c.in, vals)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ExpandList(%q) = %q, %v; want %q (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestExpandNumber(t *testing.T) {
	vals := map[string]string{"tp": "4"}
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"{tp}", 4, true},
		{"{tp}*2", 8, true},
		{"0.5", 0.5, true},
		{"{tp},{tp}", 0, false}, // a list is no number
		{"{pp}", 0, false},      // no such parameter
	} {
		got, err := ExpandNumber(c.in, vals)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ExpandNumber(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}
