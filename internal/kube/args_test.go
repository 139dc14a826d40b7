package kube

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestCheck: each option a Job cannot be made with is refused, naming the
// flag that sets it.
func TestCheck(t *testing.T) {
	ok := Options{Workers: 2, Image: "i", Name: "bench", Claim: "c"}
	tests := []struct {
		name   string
		change func(*Options)
		flag   string // "" = accepted
	}{
		{"accepted", func(*Options) {}, ""},
		{"host path instead of a claim", func(o *Options) { o.Claim, o.HostPath = "", "/d" }, ""},
		{"no workers", func(o *Options) { o.Workers = 0 }, "workers"},
		{"no image", func(o *Options) { o.Image = "" }, "image"},
		{"no volume", func(o *Options) { o.Claim = "" }, "claim"},
		{"two volumes", func(o *Options) { o.HostPath = "/d" }, "claim"},
		{"bad name", func(o *Options) { o.Name = "Bench_A" }, "name"},
		{"bad API key secret", func(o *Options) { o.APIKeySecret = "LLM_key" }, "api-key-secret"},
		{"bad credentials secret", func(o *Options) { o.CredentialsSecret = "a/b" }, "credentials-secret"},
	}
	for _, tt := range tests {
		o := ok
		tt.change(&o)
		err := o.Check()
		e, isOpt := errors.AsType[*OptionError](err)
		switch {
		case tt.flag == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.flag != "" && (!isOpt || e.Flag != tt.flag || !strings.Contains(err.Error(), "--"+tt.flag)):
			t.Errorf("%s: %v; want an OptionError of --%s", tt.name, err, tt.flag)
		}
	}
}

// TestWorkerArgs: the workers get every run flag as given, in order, and
// neither the Job's own flags (with their values) nor --start-at.
func TestWorkerArgs(t *testing.T) {
	own := func(n string) bool { return n == "workers" || n == "image" || n == "dry" }
	isBool := func(n string) bool { return n == "dry" || n == "stream" }
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"own flags with separate values", []string{"--url", "http://x:1", "--workers", "4", "--image", "i:1", "--duration", "30s"},
			[]string{"--url", "http://x:1", "--duration", "30s"}},
		{"own flags with = values", []string{"-workers=4", "--image=i", "--rate", "5"}, []string{"--rate", "5"}},
		// A boolean own flag takes no value: what follows is run's.
		{"boolean own flag", []string{"--dry", "--stream", "--rate", "5"}, []string{"--stream", "--rate", "5"}},
		{"start-at", []string{"--start-at", "2026-12-01T09:00:00Z", "--rate", "5", "--start-at=x"}, []string{"--rate", "5"}},
	}
	for _, tt := range tests {
		if got := WorkerArgs(tt.args, own, isBool); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestSetRunArgs: credentials leave the arguments, and --no-history is
// added unless the user chose a history.
func TestSetRunArgs(t *testing.T) {
	var o Options
	o.SetRunArgs([]string{"--url", "http://u:p@x:1", "--rate", "5"}, false)
	if len(o.Credentials) != 1 || strings.Contains(strings.Join(o.RunArgs, " "), "u:p") || o.RunArgs[len(o.RunArgs)-1] != "--no-history" {
		t.Errorf("args %q, credentials %d; want the password moved and --no-history", o.RunArgs, len(o.Credentials))
	}
	o.SetRunArgs([]string{"--db", "h.db"}, true)
	if !slices.Equal(o.RunArgs, []string{"--db", "h.db"}) {
		t.Errorf("a chosen history: %q", o.RunArgs)
	}
}

// TestWrite: documents are one YAML stream, separated by ---.
func TestWrite(t *testing.T) {
	o := Options{Workers: 1, Image: "i", Name: "n", Claim: "c", Credentials: []Credential{{Key: "k", Env: "E", Value: "v"}}}
	docs, printed := Documents(&o)
	var b strings.Builder
	if err := Write(&b, docs); err != nil || !printed {
		t.Fatal(err)
	}
	parts := strings.Split(b.String(), "\n---\n")
	if len(parts) != 2 || !strings.Contains(parts[0], "kind: Secret") || !strings.Contains(parts[1], "kind: Job") || strings.HasPrefix(b.String(), "---") {
		t.Errorf("got:\n%s", b.String())
	}
}
