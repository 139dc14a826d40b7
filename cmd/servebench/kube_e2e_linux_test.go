//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
// image the Dockerfile builds, without a cluster: each pod's command and
// arguments with $(VAR) expanded from its environment as the kubelet
// expands them, JOB_COMPLETION_INDEX from the completion index, run as the
// pod's user with its fsGroup and nothing else in its environment, writing
// to the results volume at the path the Job mounts. The workers'
// directories then merge into one run with every request.
//
// By default the image is stood in for: the binary built as the Dockerfile
// builds it (static, CGO_ENABLED=0), alone in a root directory as in an
// image FROM scratch (the CA bundle beside it), each pod run chrooted. With
// SB_IMAGE naming an image built from the Dockerfile, each pod runs in that
// image under a container engine instead (scripts/image-check.sh builds
// one and runs this test so). Both need root: elsewhere the test skips,
// except in CI or with SB_IMAGE set, where it fails.
func TestKubeJobRunsInAScratchImage(t *testing.T) {
	image := os.Getenv("SB_IMAGE")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" || image != "" {
			t.Fatal("this test runs the Job's pods as their user with a group-owned volume, which needs root; CI must run it")
		}
		t.Skip("running the Job's pods as their user needs root")
	}
	srv := httptest.NewServer(http.HandlerFunc(shardServe))
	defer srv.Close()

	var pods podRunner
	if image != "" {
		pods = newEnginePods(t, image)
	} else {
		pods = newChrootPods(t)
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
	vol := pods.volume(c.VolumeMounts[0].MountPath)
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
		cmd := pods.command(podSpec{args: args, env: env, uid: uid, fsGroup: fsGroup, mount: c.VolumeMounts[0].MountPath, volume: vol})
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

// podSpec is one pod as the test runs it: its command line after the
// kubelet's expansion, its environment, user and fsGroup, and its results
// volume (mount, the path in the pod; volume, the directory here).
type podSpec struct {
	args          []string
	env           map[string]string
	uid, fsGroup  uint32
	mount, volume string
}

// podRunner runs the Job's pods in an image: volume is the directory that
// stands for the results volume mounted at mount, command the pod's
// process, not yet started.
type podRunner interface {
	volume(mount string) string
	command(p podSpec) *exec.Cmd
}

// chrootPods stand in for the image with a root directory holding what
// the Dockerfile's FROM scratch stage holds.
type chrootPods struct{ root string }

func newChrootPods(t *testing.T) chrootPods {
	t.Helper()
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
	return chrootPods{root: root}
}

func (r chrootPods) volume(mount string) string { return filepath.Join(r.root, mount) }

func (r chrootPods) command(p podSpec) *exec.Cmd {
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Path = p.args[0] // resolved inside the chroot, not on this machine's PATH
	cmd.Env = envList(p.env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: r.root, Credential: &syscall.Credential{Uid: p.uid, Gid: p.uid, Groups: []uint32{p.fsGroup}}}
	cmd.Dir = "/"
	return cmd
}

// enginePods run each pod in a container of the image under a container
// engine: SB_CONTAINER (default podman, else docker, whichever is found),
// with SB_CONTAINER_FLAGS added to each run (for example the ulimits of a
// machine whose limits are below the engine's defaults). The container
// shares this machine's network, so that it reaches the test's server on
// loopback as a pod reaches a Service.
type enginePods struct {
	engine []string
	image  string
	flags  []string
	dir    string
}

func newEnginePods(t *testing.T, image string) enginePods {
	t.Helper()
	engine := strings.Fields(os.Getenv("SB_CONTAINER"))
	if len(engine) == 0 {
		for _, name := range []string{"podman", "docker"} {
			if _, err := exec.LookPath(name); err == nil {
				engine = []string{name}
				break
			}
		}
	}
	if len(engine) == 0 {
		t.Fatalf("SB_IMAGE=%s: no container engine (podman or docker) on PATH; set SB_CONTAINER", image)
	}
	e := enginePods{engine: engine, image: image, flags: strings.Fields(os.Getenv("SB_CONTAINER_FLAGS")), dir: t.TempDir()}
	// The image must be the Dockerfile's: its entrypoint the static
	// binary, its user not root.
	out, err := exec.Command(engine[0], append(engine[1:], "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Entrypoint}}", image)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s image inspect %s: %v\n%s", engine[0], image, err, out)
	}
	if got, want := strings.TrimSpace(string(out)), `65532:65532 ["`+kube.Binary+`"]`; got != want {
		t.Fatalf("image %s: user and entrypoint %q, want the Dockerfile's %q", image, got, want)
	}
	return e
}

func (e enginePods) volume(string) string { return e.dir }

func (e enginePods) command(p podSpec) *exec.Cmd {
	// The pod's command replaces the image's entrypoint, as in Kubernetes;
	// its environment is the pod's and what the engine adds (a kubelet
	// adds its own too).
	args := append(append([]string{}, e.engine[1:]...), "run", "--rm", "--network", "host",
		"--user", fmt.Sprintf("%d:%d", p.uid, p.uid), "--group-add", strconv.Itoa(int(p.fsGroup)),
		"--volume", p.volume+":"+p.mount, "--entrypoint", p.args[0])
	args = append(args, e.flags...)
	for _, kv := range envList(p.env) {
		args = append(args, "--env", kv)
	}
	args = append(append(args, e.image), p.args[1:]...)
	return exec.Command(e.engine[0], args...)
}

// envList is env as KEY=VALUE lines, sorted.
func envList(env map[string]string) []string {
	l := make([]string, 0, len(env))
	for k, v := range env {
		l = append(l, k+"="+v)
	}
	slices.Sort(l)
	return l
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
