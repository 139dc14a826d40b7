//go:build linux

package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/servebench/servebench/internal/kube"
)

// The Job servebench kube job prints, run as its pods would run it in the
// image the Dockerfile builds, without a cluster: the binary built as the
// Dockerfile builds it (static, CGO_ENABLED=0), alone in a root directory
// as in an image FROM scratch (the CA bundle beside it), each pod's command
// and arguments with $(VAR) expanded from its environment as the kubelet
// expands them, JOB_COMPLETION_INDEX from the completion index, run
// chrooted as the pod's user with its fsGroup and nothing else in its
// environment, writing to the results volume at the path the Job mounts.
// The workers' directories then merge into one run with every request.
// Chroot needs root: elsewhere the test skips, except in CI, where it fails.
func TestKubeJobRunsInAScratchImage(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("this test runs the Job's pods in a chroot, which needs root; CI must run it")
		}
		t.Skip("running the Job's pods in a chroot needs root")
	}
	srv := httptest.NewServer(http.HandlerFunc(shardServe))
	defer srv.Close()

	// The image: the Dockerfile's build, its FROM scratch stage's files.
	root := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(root, kube.Binary), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the image's static build: %v\n%s", err, out)
	}
	if ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		writeFile(t, filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"), ca)
	}
	if out, err := exec.Command("ldd", filepath.Join(root, kube.Binary)).CombinedOutput(); err == nil {
		t.Fatalf("the image's binary is dynamically linked, and scratch has no libc:\n%s", out)
	}

	const workers, requests = 3, 30
	code, manifest, stderr := run(t, "kube", "job", "--url", srv.URL, "--api", "openai-completions", "--model", "m",
		"--no-preflight", "--prompt-tokens", "8", "--output-tokens", strconv.Itoa(shardTokens), "--tokenizer", "cl100k_base",
		"--no-telemetry", "--concurrency", "6", "--requests", strconv.Itoa(requests),
		"--workers", strconv.Itoa(workers), "--image", "servebench:test", "--claim", "results", "--name", "scratch", "--start-in", "3s")
	if code != 0 {
		t.Fatalf("kube job: exit %d\n%s", code, stderr)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(manifest), &job); err != nil {
		t.Fatalf("the manifest: %v\n%s", err, manifest)
	}
	pod := job.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.Containers[0].VolumeMounts) != 1 || pod.SecurityContext == nil || pod.SecurityContext.FSGroup == nil {
		t.Fatalf("want one container, one volume mount and an fsGroup:\n%s", manifest)
	}
	c := pod.Containers[0]
	// The volume: a directory of the fsGroup's, group-writable and setgid,
	// as the kubelet prepares a claim's volume for a pod with an fsGroup.
	fsGroup := uint32(*pod.SecurityContext.FSGroup)
	vol := filepath.Join(root, c.VolumeMounts[0].MountPath)
	if err := os.MkdirAll(vol, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(vol, 0, int(fsGroup)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(vol, 0o775|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	uid := uint32(65532) // the Dockerfile's USER, when the pod names none
	if u := pod.SecurityContext.RunAsUser; u != nil {
		uid = uint32(*u)
	}

	var cmds []*exec.Cmd
	for i := range int(*job.Spec.Completions) {
		env := podEnv(t, c, i)
		args := append(append([]string{}, c.Command...), c.Args...)
		for j, a := range args {
			args[j] = expandVars(a, env)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Path = args[0] // resolved inside the chroot, not on this machine's PATH
		cmd.Env = make([]string, 0, len(env))
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{fsGroup}}}
		cmd.Dir = "/"
		cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
		if err := cmd.Start(); err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		cmds = append(cmds, cmd)
	}
	shardWait(t, cmds)

	var dirs []string
	for i := range workers {
		dirs = append(dirs, filepath.Join(vol, "scratch", "worker-"+strconv.Itoa(i)))
	}
	code, out, stderr := run(t, append(append([]string{"report"}, dirs...), "--json")...)
	if code != 0 {
		t.Fatalf("report of the workers' directories: exit %d\n%s", code, stderr)
	}
	s := shardDecode(t, "merged", out)
	if len(s.Points) != 1 || s.Points[0].Requests.Completed != requests || s.Points[0].Requests.Failed != 0 {
		t.Errorf("merged points %+v, want one of %d completed requests", s.Points, requests)
	}
	if len(s.Run.Workers) != workers {
		t.Errorf("%d workers in the merge, want %d", len(s.Run.Workers), workers)
	}
	for _, w := range s.Run.Workers {
		if !w.Finished || w.Records == 0 {
			t.Errorf("worker %+v did not finish or wrote nothing", w)
		}
	}
}

// podEnv is the container's environment as the kubelet sets it for the
// pod of completion index i: JOB_COMPLETION_INDEX from the annotation the
// Job controller puts on that pod; any other variable must be a plain value
// (a Secret's would need a cluster).
func podEnv(t *testing.T, c corev1.Container, i int) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = expandVars(e.Value, env)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['"+batchv1.JobCompletionIndexAnnotation+"']":
			env[e.Name] = strconv.Itoa(i)
		default:
			t.Fatalf("env %s: a source this test cannot stand in for: %+v", e.Name, e.ValueFrom)
		}
	}
	if env["JOB_COMPLETION_INDEX"] != strconv.Itoa(i) {
		t.Fatalf("the container does not get its completion index as JOB_COMPLETION_INDEX: %+v", c.Env)
	}
	return env
}

// expandVars expands $(NAME) from env as the kubelet does in a container's
// command, arguments and env values; $$ escapes a dollar, and an unknown
// name stays as written.
var varRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

func expandVars(s string, env map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		if v, ok := env[strings.TrimSuffix(strings.TrimPrefix(m, "$("), ")")]; ok {
			return v
		}
		return m
	})
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
