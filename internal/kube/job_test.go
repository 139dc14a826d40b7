package kube

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestJobHostPath(t *testing.T) {
	job := NewJob(Options{Workers: 2, Image: "i", Name: "n", HostPath: "/var/tmp/sb", RunArgs: []string{"--url", "http://x:1"},
		StartAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)})
	pod := job.Spec.Template.Spec
	v := pod.Volumes[0]
	if v.HostPath == nil || v.HostPath.Path != "/var/tmp/sb" || v.PersistentVolumeClaim != nil {
		t.Errorf("volume %+v, want the node directory", v)
	}
	// A node directory is root's: the worker writes it as root.
	if sc := pod.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 0 || sc.RunAsNonRoot != nil || sc.FSGroup != nil {
		t.Errorf("security context %+v, want root for a node directory", sc)
	}
	want := []string{"run", "--url", "http://x:1", "--shard=$(JOB_COMPLETION_INDEX)/2", "--start-at=2026-12-01T09:00:00Z", "--out=/results/n/worker-$(JOB_COMPLETION_INDEX)"}
	if got := pod.Containers[0].Args; !slices.Equal(got, want) {
		t.Errorf("args %q, want %q", got, want)
	}
}

func TestJobAPIKeySecret(t *testing.T) {
	c := NewJob(Options{Workers: 1, Image: "i", Name: "n", Claim: "c", APIKeySecret: "llm-key", APIKeyEnv: "MY_KEY"}).Spec.Template.Spec.Containers[0]
	if len(c.Env) != 2 || c.Env[1].Name != "MY_KEY" || c.Env[1].ValueFrom.SecretKeyRef.Name != "llm-key" || c.Env[1].ValueFrom.SecretKeyRef.Key != "api-key" {
		t.Errorf("env %+v, want MY_KEY from secret llm-key's api-key", c.Env)
	}
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{"c256": true, "bench-a": true, "Bench_A": false, "": false, strings.Repeat("a", 49): false} {
		if err := ValidName(name); (err == nil) != ok {
			t.Errorf("ValidName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

// TestDockerfileMatchesTheJob: the image the Job runs is static (built
// with CGO_ENABLED=0, its last stage FROM scratch) and holds the binary
// where the Job's command looks for it, run as the user the Job's fsGroup
// gives the results volume to.
func TestDockerfileMatchesTheJob(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(df, -1)
	if len(froms) == 0 || froms[len(froms)-1][1] != "scratch" {
		t.Errorf("last stage is not FROM scratch: %q", froms)
	}
	checks := map[string]string{
		"static build":   `(?m)^RUN CGO_ENABLED=0 go build .* -o ` + Binary + ` ./cmd/servebench$`,
		"the entrypoint": `(?m)^ENTRYPOINT \["` + Binary + `"\]$`,
		"the user":       `(?m)^USER 65532:65532$`,
		// scripts/image-check.sh finds the builder to stand in for by it
		"the build stage": `(?m)^FROM \S+ AS build$`,
	}
	for what, re := range checks {
		if !regexp.MustCompile(re).MatchString(df) {
			t.Errorf("Dockerfile: %s does not match %s", what, re)
		}
	}
	// The build context is the sources: not the history, and not the
	// engine and model caches scripts/ keep in .cache (hundreds of MB).
	ig, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".git", ".cache", "runs"} {
		if !slices.Contains(strings.Fields(string(ig)), p) {
			t.Errorf(".dockerignore does not leave out %s", p)
		}
	}
}

// TestStartMark: a mark given is kept to the nanosecond; else it is in
// from now, to the second, so that every worker's --start-at reads alike.
func TestStartMark(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 700_000_000, time.UTC)
	given := time.Date(2026, 12, 1, 9, 30, 0, 5, time.UTC)
	if got := StartMark(given, 2*time.Minute, now); !got.Equal(given) {
		t.Errorf("given: %v, want %v", got, given)
	}
	if got, want := StartMark(time.Time{}, 2*time.Minute, now), time.Date(2026, 12, 1, 9, 2, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("from now: %v, want %v", got, want)
	}
}

// TestJobStartAtKeepsFraction: a --start-at with a fraction of a second
// reaches every worker as given, not truncated to the second before it.
func TestJobStartAtKeepsFraction(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 250_000_000, time.UTC)
	job := NewJob(Options{Workers: 2, Image: "i", Name: "n", HostPath: "/var/tmp/sb", StartAt: at})
	var got time.Time
	for _, a := range job.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--start-at="); ok {
			var err error
			if got, err = time.Parse(time.RFC3339, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !got.Equal(at) {
		t.Errorf("the workers start at %v, want %v", got, at)
	}
}
