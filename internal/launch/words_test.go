package launch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string
		err      string // a part of the error, "" for none
	}{
		{"blanks separate", "vllm serve  m\t--port {port}", []string{"vllm", "serve", "m", "--port", "{port}"}, ""},
		{"single quotes keep all", `a 'b c $x "d"'`, []string{"a", `b c $x "d"`}, ""},
		{"double quotes keep blanks", `a "b c" "x\"y" "p\\q" "r\s"`, []string{"a", "b c", `x"y`, `p\q`, `r\s`}, ""},
		{"adjacent parts join", `--x='a b'"c"d`, []string{"--x=a bcd"}, ""},
		{"empty quotes are a word", `a '' b`, []string{"a", "", "b"}, ""},
		{"backslash escapes", `a\ b \'c`, []string{"a b", "'c"}, ""},
		{"backslash-newline joins", "a \\\n b", []string{"a", "b"}, ""},
		{"json argument", `--cfg '{"a": 1}'`, []string{"--cfg", `{"a": 1}`}, ""},
		{"pipe refused", "a | b", nil, "not run through a shell"},
		{"semicolon refused", "a; rm x", nil, "not run through a shell"},
		{"dollar refused", "a $HOME", nil, "not run through a shell"},
		{"dollar in double quotes refused", `a "$(id)"`, nil, "shell expansion"},
		{"quoted operators pass", `a '|' ";"`, []string{"a", "|", ";"}, ""},
		{"unterminated single", "a 'b", nil, "unterminated '"},
		{"unterminated double", `a "b`, nil, `unterminated "`},
		{"trailing backslash", `a \`, nil, "trailing"},
		{"nothing", "  ", nil, "no command"},
	} {
		got, err := Split(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: Split(%q) error %v, want one saying %q", c.name, c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Split(%q) = %q, %v; want %q", c.name, c.in, got, err, c.want)
		}
	}
}

func TestExpandKeepsOneWord(t *testing.T) {
	words, err := Split("server --port {port} --name {n} --x=a{n}b")
	if err != nil {
		t.Fatal(err)
	}
	// a value that a shell would run as a second command
	vals := map[string]string{"port": "8000", "n": "x; rm -rf / $(id) 'q'"}
	got, err := ExpandAll(words, vals)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"server", "--port", "8000", "--name", "x; rm -rf / $(id) 'q'", "--x=ax; rm -rf / $(id) 'q'b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = Expand("--seqs {sqes}", vals)
	if ue, ok := errors.AsType[*UnknownError](err); !ok || ue.Name != "sqes" {
		t.Errorf("a misspelt name: error %v, want an UnknownError naming sqes", err)
	}
	// braces that are not a placeholder are text
	if got, err := Expand(`{"a": {n}}`, map[string]string{"n": "1"}); err != nil || got != `{"a": 1}` {
		t.Errorf(`Expand({"a": {n}}) = %q, %v`, got, err)
	}
}

// FuzzSplit checks that Split never panics, and that a split command
// quoted back word by word splits to the same words.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"a b", `a 'b c' "d\"e"`, `x\ y`, "vllm serve m --port {port}", `"`, `'`, `\`, "a|b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		again, err := Split(strings.Join(quoted, " "))
		if err != nil || !reflect.DeepEqual(again, words) {
			t.Fatalf("Split(%q) = %q; requoted it splits to %q, %v", s, words, again, err)
		}
	})
}

// FuzzExpand checks that a value, whatever it holds, is substituted as
// text into its one word.
func FuzzExpand(f *testing.F) {
	f.Add("a {v} b", "x y")
	f.Add("{v}{v}", "'\"; |")
	f.Fuzz(func(t *testing.T, cmd, v string) {
		words, err := Split(cmd)
		if err != nil {
			return
		}
		got, err := ExpandAll(words, map[string]string{"v": v, "port": "1"})
		if err != nil {
			return
		}
		if len(got) != len(words) {
			t.Fatalf("%q with v=%q: %d words, want %d", cmd, v, len(got), len(words))
		}
		for i, w := range words {
			want := strings.NewReplacer("{v}", v, "{port}", "1").Replace(w)
			if got[i] != want {
				t.Fatalf("word %q with v=%q: %q, want %q", w, v, got[i], want)
			}
		}
	})
}

func TestPlaces(t *testing.T) {
	for _, c := range []struct {
		words []string
		want  bool
	}{
		{[]string{"vllm", "--port", "{port}"}, true},
		{[]string{"OLLAMA_HOST=127.0.0.1:{port}"}, true}, // inside a word
		{[]string{"--port", "{ports}", "port"}, false},   // another name, bare text
		{[]string{`--cfg`, `{"port": 1}`}, false},        // braces that are text
		{nil, false},
	} {
		if got := Places(c.words, PortName); got != c.want {
			t.Errorf("Places(%q) = %v, want %v", c.words, got, c.want)
		}
	}
}

func TestCheckConfigs(t *testing.T) {
	configs, err := Configs([]Param{{Name: "seqs", Values: []string{"8", "16"}}})
	if err != nil {
		t.Fatal(err)
	}
	// {port} is known before it is picked; a parameter is known
	if err := CheckConfigs([]string{"s", "--port", "{port}", "--n", "{seqs}"}, configs); err != nil {
		t.Errorf("known names: %v", err)
	}
	// a misspelt parameter is named, before any server starts
	err = CheckConfigs([]string{"s", "--n", "{seq}"}, configs)
	if ue, ok := errors.AsType[*UnknownError](err); !ok || ue.Name != "seq" {
		t.Errorf("unknown name: got %v, want an UnknownError naming seq", err)
	}
	// the configurations' values are left as they were
	if _, ok := configs[0].Values[PortName]; ok {
		t.Errorf("CheckConfigs wrote {port} into a configuration: %v", configs[0].Values)
	}
}

func TestQuote(t *testing.T) {
	got := Quote([]string{"vllm", "a b", "", "it's", "--x=$HOME", "plain-1.0"})
	want := []string{"vllm", "'a b'", "''", `'it'\''s'`, "'--x=$HOME'", "plain-1.0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Quote = %q, want %q", got, want)
	}
	// quoted words split back to the words given
	if back, err := Split(strings.Join(got, " ")); err != nil || !reflect.DeepEqual(back, []string{"vllm", "a b", "", "it's", "--x=$HOME", "plain-1.0"}) {
		t.Errorf("Split(Quote) = %q, %v", back, err)
	}
}
