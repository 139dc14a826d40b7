package cli

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// kubeBase are the flags every kube job test gives.
var kubeBase = []string{"job", "--url", "http://llm.default.svc:8000", "--workers", "4", "--image", "servebench:1", "--claim", "results", "--duration", "30s"}

// kubeJob runs kube job with args and decodes what it prints strictly: a
// field batch/v1 has not is an error, as kubectl apply's server-side
// validation would make it.
func kubeJob(t *testing.T, args ...string) *batchv1.Job {
	t.Helper()
	code, stdout, stderr := runMain(t, append([]string{"kube"}, args...)...)
	if code != 0 {
		t.Fatalf("kube %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatalf("the manifest does not decode strictly into batch/v1 Job: %v\n%s", err, stdout)
	}
	return &job
}

func TestKubeJobIsAnIndexedJob(t *testing.T) {
	before := time.Now()
	job := kubeJob(t, append(kubeBase, "--name", "c256", "--concurrency", "64,256", "--duration", "60s")...)
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != "c256" {
		t.Errorf("apiVersion %q kind %q name %q", job.APIVersion, job.Kind, job.Name)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 {
		t.Errorf("spec: mode %v, completions %v, parallelism %v; want Indexed, 4, 4", s.CompletionMode, *s.Completions, *s.Parallelism)
	}
	// No retry of a worker, and a failed worker fails its index only: a
	// Job-wide backoffLimit would stop the other workers mid-run.
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0 || s.BackoffLimit != nil || s.MaxFailedIndexes != nil {
		t.Errorf("backoffLimitPerIndex %v, backoffLimit %v, maxFailedIndexes %v; want 0, unset, unset", s.BackoffLimitPerIndex, s.BackoffLimit, s.MaxFailedIndexes)
	}
	pod := s.Template.Spec
	c := pod.Containers[0]
	if pod.RestartPolicy != "Never" || c.Image != "servebench:1" || !slices.Equal(c.Command, []string{"/servebench"}) || c.Args[0] != "run" {
		t.Errorf("pod: restart %q, image %q, command %q, args %q", pod.RestartPolicy, c.Image, c.Command, c.Args)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken %v; want false, as the workers never call the API server", pod.AutomountServiceAccountToken)
	}
	// The Pod Security Standards' restricted profile, with a claim.
	psc, csc := pod.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != "RuntimeDefault" ||
		psc.FSGroup == nil || *psc.FSGroup != 65532 {
		t.Errorf("pod security context %+v; want runAsNonRoot, seccomp RuntimeDefault, fsGroup 65532", psc)
	}
	if csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation || csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v; want no privilege escalation and every capability dropped", csc)
	}
	for _, want := range []string{"--no-history", "--shard=$(JOB_COMPLETION_INDEX)/4", "--out=/results/c256/worker-$(JOB_COMPLETION_INDEX)", "--concurrency", "64,256"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %q lack %q", c.Args, want)
		}
	}
	if len(c.Env) == 0 || c.Env[0].Name != "JOB_COMPLETION_INDEX" || c.Env[0].ValueFrom.FieldRef == nil {
		t.Errorf("JOB_COMPLETION_INDEX is not declared from the pod's completion index: %+v", c.Env)
	}
	if v := pod.Volumes[0]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "results" || c.VolumeMounts[0].MountPath != "/results" {
		t.Errorf("results volume %+v mounted at %+v", v, c.VolumeMounts)
	}
	// One mark for all, --start-in (2m) from now, whole seconds.
	mark := kubeArg(t, c.Args, "--start-at=")
	at, err := time.Parse(time.RFC3339, mark)
	if err != nil || at.Before(before.Add(2*time.Minute-time.Second)) || at.After(time.Now().Add(2*time.Minute)) {
		t.Errorf("start mark %q (%v), want 2 minutes from now", mark, err)
	}
}

// kubeArg is the value of the argument that begins with prefix.
func kubeArg(t *testing.T, args []string, prefix string) string {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return v
		}
	}
	t.Fatalf("no %s in %q", prefix, args)
	return ""
}

// kubeSamples are values for run flags whose default is empty or is
// refused with the others' defaults (--duration 0 leaves five points
// unspaced); the others are given their default. A new run flag without a
// usable default must get one here, so that this test covers it.
var kubeSamples = map[string]string{
	"ca-cert": "/results/ca.pem", "concurrency": "4,8", "dataset": "/results/data.jsonl", "header": "X-Team: infra",
	"metrics-url": "http://llm:8000/metrics", "gpu-metrics-url": "http://dcgm:9400/metrics", "host-metrics-url": "http://node:9100/metrics",
	"model": "m", "rate": "2", "sim-config": "/results/sim.yaml", "slice": "10s", "warmup": "5s", "url": "http://other:8000",
	"start-at": "2026-12-01T09:00:00Z", "dataset-format": "sharegpt", "dataset-order": "shuffle",
	"duration": "45s", "objective": "chat", "slo": "ttft p95 <= 1s", "out": "runs/a", "shard": "0/2",
	"db": "/results/history.db", "label": "gpu=L4", "trace": "/results/trace.jsonl", "trace-format": "mooncake",
	"live": "127.0.0.1:8089",
}

// kubeWith are the flags some run flags are given with, as run requires.
var kubeWith = map[string][]string{
	"dataset-format": {"--dataset=/results/data.jsonl"}, "dataset-order": {"--dataset=/results/data.jsonl"},
}

// kubeRefused are run flags kube job refuses: the Job sets them, or an
// objective judges the merged run, not a worker.
var kubeRefused = map[string]string{"out": "the Job sets it", "shard": "the Job sets it",
	"objective": "judge the merged run", "slo": "judge the merged run", "trace": "from one process",
	"live": "pod's own loopback"}

// TestKubeJobCarriesEveryRunFlag gives each of run's flags in turn and
// finds it among the workers' arguments as given.
func TestKubeJobCarriesEveryRunFlag(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f runFlags
	f.define(fs)
	fs.VisitAll(func(fl *flag.Flag) {
		v, ok := kubeSamples[fl.Name]
		if !ok {
			v = fl.DefValue
		}
		if v == "" {
			t.Errorf("run flag --%s has no default: give kubeSamples a value for it", fl.Name)
			return
		}
		arg := "--" + fl.Name + "=" + v
		if why, refused := kubeRefused[fl.Name]; refused {
			code, _, stderr := runMain(t, append(append([]string{"kube"}, kubeBase...), arg)...)
			if code != ExitUsage || !strings.Contains(stderr, why) {
				t.Errorf("%s: exit %d, %q; want a usage error saying %q", arg, code, stderr, why)
			}
			return
		}
		args := kubeJob(t, append(append(slices.Clone(kubeBase), kubeWith[fl.Name]...), arg)...).Spec.Template.Spec.Containers[0].Args
		if fl.Name == "start-at" {
			arg = "--start-at=" + v // the one mark the Job passes
		}
		if !slices.Contains(args, arg) {
			t.Errorf("%s is not passed to the workers: %q", arg, args)
		}
	})
	// A flag and its value as two arguments stay two arguments, in order.
	args := kubeJob(t, append(kubeBase, "--header", "X-A: 1", "--insecure", "--requests", "7")...).Spec.Template.Spec.Containers[0].Args
	if i := slices.Index(args, "--header"); i < 0 || args[i+1] != "X-A: 1" || args[i+2] != "--insecure" || args[i+4] != "7" {
		t.Errorf("split flags not carried as given: %q", args)
	}
}

func TestKubeJobUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"--workers", "2"}, "one subcommand: job"},
		{"no workers", []string{"job", "--url", "http://x:1", "--image", "i", "--claim", "c"}, "--workers"},
		{"no image", []string{"job", "--url", "http://x:1", "--workers", "2", "--claim", "c"}, "--image"},
		{"no volume", []string{"job", "--url", "http://x:1", "--workers", "2", "--image", "i"}, "one of --claim"},
		{"two volumes", []string{"job", "--url", "http://x:1", "--workers", "2", "--image", "i", "--claim", "c", "--host-path", "/d"}, "one of --claim"},
		{"no url", []string{"job", "--workers", "2", "--image", "i", "--claim", "c"}, "--url"},
		{"bad name", append(slices.Clone(kubeBase), "--name", "Bench_A"), "--name"},
		{"find capacity", append(slices.Clone(kubeBase), "--find-capacity"), "judge the merged run"},
		{"bad secret name", append(slices.Clone(kubeBase), "--api-key-secret", "LLM_key"), `--api-key-secret: "LLM_key"`},
		{"bad credentials secret", append(slices.Clone(kubeBase), "--credentials-secret", "a/b"), `--credentials-secret: "a/b"`},
		// Every worker would refuse these: the Job is refused instead.
		{"unspaced marks", []string{"job", "--url", "http://x:1", "--workers", "2", "--image", "i", "--claim", "c", "--concurrency", "1,2"}, "--start-every"},
		{"cap below the workers", append(slices.Clone(kubeBase), "--rate", "5", "--max-concurrency", "3"), "--max-concurrency 3 is split across 4 workers"},
		{"a trace, sent to run", append(slices.Clone(kubeBase), "--trace", "t.jsonl"), "Try: servebench run --trace FILE"},
		{"a flag of run's, hinted as kube job's", append(slices.Clone(kubeBase), "--rate", "0"), "Try: servebench kube job --url URL --workers 4 --image IMAGE --claim PVC --rate 0.5,1,2"},
	}
	for _, tt := range tests {
		code, _, stderr := runMain(t, append([]string{"kube"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", tt.name, code, stderr, tt.want)
		}
	}
}

// TestKubeJobGolden: the manifests kube job prints, byte for byte (go test
// -update rewrites them).
func TestKubeJobGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"claim", []string{"job", "--url", "http://llm.default.svc:8000", "--workers", "4", "--image", "servebench:1", "--claim", "results",
			"--duration", "30s", "--start-at", "2026-12-01T09:00:00Z", "--name", "c256", "--concurrency", "64,256", "--duration", "60s"}},
		{"hostpath-apikey", []string{"job", "--url", "http://llm:8000", "--workers", "2", "--image", "i", "--host-path", "/var/tmp/sb",
			"--namespace", "bench", "--api-key-secret", "llm-key", "--start-at", "2026-12-01T09:00:00Z", "--rate", "5", "--requests", "100"}},
	}
	for _, tt := range tests {
		code, stdout, stderr := runMain(t, append([]string{"kube"}, tt.args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", tt.name, code, stderr)
		}
		path := filepath.Join("testdata", "kube", tt.name+".golden")
		if *updateGolden {
			if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if stdout != string(want) {
			t.Errorf("%s differs from %s:\n%s", tt.name, path, stdout)
		}
	}
}

// kubeDocs splits kube job's output into its YAML documents.
func kubeDocs(out string) []string { return strings.Split(out, "\n---\n") }

// kubeExpand expands $(NAME) as the kubelet does in a container's
// arguments (an unknown name stays as written).
func kubeExpand(s string, env map[string]string) string {
	return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := env[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// TestKubeJobCredentialsGoToASecret: every credential of the run flags
// (credential headers, user:password in --url and the telemetry URLs)
// leaves the Job for a Secret printed before it; the workers' variables
// come from its keys, and their arguments, once the kubelet expands them,
// are the flags as given.
func TestKubeJobCredentialsGoToASecret(t *testing.T) {
	secrets := []string{"tok-abcdef123", "xk-998877", "sid-556677", "p%40ss:w", "gpu-pw-1234", "bob"}
	given := []string{"--duration", "30s", "--url", "http://bob:p%40ss:w@llm.default.svc:8000/v1", "--header", "Authorization: Bearer tok-abcdef123",
		"--header=X-Api-Key: xk-998877", "--header", "X-Team: infra", "-header", "Cookie: a=1; sid=sid-556677", "--header", "Cookie: sid-556677",
		"--gpu-metrics-url=http://dcgm:gpu-pw-1234@gpu:9400/metrics", "--concurrency", "4"}
	args := append([]string{"job", "--workers", "2", "--image", "i", "--claim", "c", "--name", "bench-a"}, given...)
	code, stdout, stderr := runMain(t, append([]string{"kube"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	docs := kubeDocs(stdout)
	if len(docs) != 2 {
		t.Fatalf("%d documents, want the Secret and the Job:\n%s", len(docs), stdout)
	}
	var secret corev1.Secret
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &secret); err != nil || secret.Kind != "Secret" || secret.Name != "bench-a-credentials" {
		t.Fatalf("first document: %v, kind %q name %q; want the Secret bench-a-credentials\n%s", err, secret.Kind, secret.Name, docs[0])
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil || job.Kind != "Job" {
		t.Fatalf("second document: %v, kind %q; want the Job\n%s", err, job.Kind, docs[1])
	}
	for _, s := range secrets {
		if strings.Contains(docs[1], s) {
			t.Errorf("the Job holds the credential %q:\n%s", s, docs[1])
		}
		if strings.Contains(stderr, s) {
			t.Errorf("stderr shows the credential %q: %s", s, stderr)
		}
	}
	c := job.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		if ref := e.ValueFrom.SecretKeyRef; ref != nil {
			v, ok := secret.StringData[ref.Key]
			if ref.Name != secret.Name || !ok {
				t.Errorf("env %s from %s's key %q: not in the Secret printed (%v)", e.Name, ref.Name, ref.Key, secret.StringData)
			}
			env[e.Name] = v
		}
	}
	if len(env) != 6 || len(secret.StringData) != 6 {
		t.Errorf("%d variables from %d keys, want 6 of each: %v", len(env), len(secret.StringData), secret.StringData)
	}
	var got []string
	for _, a := range c.Args[1:] {
		got = append(got, kubeExpand(a, env))
	}
	if !slices.Equal(got[:len(given)], given) {
		t.Errorf("the workers' arguments, expanded:\n%q\nwant the flags as given:\n%q", got[:len(given)], given)
	}
	if !strings.Contains(stderr, "bench-a-credentials") || !strings.Contains(stderr, "keep this output private") {
		t.Errorf("stderr does not say where the credentials went: %q", stderr)
	}
}

// TestKubeJobNamedCredentialsSecret: with --credentials-secret the Job
// refers to the user's Secret, none is printed, and stderr names the keys
// it must hold, never their values.
func TestKubeJobNamedCredentialsSecret(t *testing.T) {
	code, stdout, stderr := runMain(t, append(append([]string{"kube"}, kubeBase...), "--header", "X-Api-Key: xk-998877", "--credentials-secret", "mine")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if len(kubeDocs(stdout)) != 1 || strings.Contains(stdout+stderr, "xk-998877") {
		t.Errorf("want the Job alone, without the credential:\n%s\n%s", stdout, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatal(err)
	}
	e := job.Spec.Template.Spec.Containers[0].Env[1]
	if e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "mine" || e.ValueFrom.SecretKeyRef.Key != "header-x-api-key" {
		t.Errorf("env %+v, want SERVEBENCH_HEADER_X_API_KEY from mine's header-x-api-key", e)
	}
	if want := "kubectl create secret generic mine --from-literal=header-x-api-key=..."; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q does not say %q", stderr, want)
	}
	// A Secret for credentials that no flag carries is a mistake.
	code, _, stderr = runMain(t, append(append([]string{"kube"}, kubeBase...), "--credentials-secret", "mine")...)
	if code != ExitUsage || !strings.Contains(stderr, "--credentials-secret mine: no --header or URL") {
		t.Errorf("exit %d, %q; want a usage error", code, stderr)
	}
}

// TestKubeJobAPIKeyInEnvironment: an API key in the environment reaches
// the workers through --api-key-secret only; without it, kube job says
// how, rather than print a Job whose workers lack the key.
func TestKubeJobAPIKeyInEnvironment(t *testing.T) {
	const key = "sk-env-0123456789"
	kube := func(extra ...string) (int, string, string) {
		var out, errb strings.Builder
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
			if k == "SERVEBENCH_API_KEY" {
				return key
			}
			return ""
		}}
		code := env.Main(t.Context(), append(append([]string{"kube"}, kubeBase...), extra...))
		return code, out.String(), errb.String()
	}
	code, stdout, stderr := kube()
	if code != ExitUsage || !strings.Contains(stderr, "--api-key-secret NAME") || !strings.Contains(stderr, `--from-literal=api-key="$SERVEBENCH_API_KEY"`) {
		t.Errorf("exit %d, %q; want a usage error saying to give --api-key-secret", code, stderr)
	}
	if strings.Contains(stdout+stderr, key) {
		t.Errorf("the key is printed: %s%s", stdout, stderr)
	}
	if code, stdout, stderr = kube("--api-key-secret", "llm-key"); code != 0 || strings.Contains(stdout+stderr, key) {
		t.Errorf("with --api-key-secret: exit %d, %s%s", code, stdout, stderr)
	}
	// Another variable named: the one set is not the workers' key.
	if code, _, stderr = kube("--api-key-env", "OTHER_KEY"); code != 0 {
		t.Errorf("with --api-key-env OTHER_KEY: exit %d, %s", code, stderr)
	}
	if code, _, stderr = kube("--api-key-env=", "--api-key-secret", "llm-key"); code != ExitUsage || !strings.Contains(stderr, "--api-key-env is empty") {
		t.Errorf("--api-key-secret with no variable: exit %d, %q", code, stderr)
	}
}
