//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
)

// The Job servebench kube job prints, applied with kubectl to a real
// Kubernetes control plane (API server, Job controller, scheduler: the one
// SB_KUBECONFIG names, which scripts/cluster-check.sh starts on this
// machine) with one node whose kubelet the test stands in for. The API
// server validates and defaults the manifest, the Job controller creates
// the indexed pods and judges the Job, the scheduler binds them; the
// stand-in kubelet runs each bound pod as the chroot test does, from the
// pod the API server holds (its completion index read from the annotation
// the Job controller set), reports its state, and stops a pod that is
// deleted, as a kubelet does. Skipped without SB_KUBECONFIG; it needs root.
func TestKubeJobOnACluster(t *testing.T) {
	kubeconfig := os.Getenv("SB_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("SB_KUBECONFIG names no control plane (scripts/cluster-check.sh starts one)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("the stand-in kubelet runs pods chrooted as their user, which needs root")
	}
	kubectlBin := os.Getenv("SB_KUBECTL")
	if kubectlBin == "" {
		kubectlBin = "kubectl"
	}
	srv := httptest.NewServer(http.HandlerFunc(shardServe))
	defer srv.Close()
	id := fmt.Sprintf("sb-%d", time.Now().UnixNano()%1e9)
	node := newStandInNode(t, kubectl{t: t, bin: kubectlBin, config: kubeconfig, ns: "default"}, id+"-node", newChrootPods(t))

	const workers = 3
	job := func(t *testing.T, k kubectl, name string, args ...string) {
		t.Helper()
		args = append([]string{"kube", "job", "--url", srv.URL, "--api", "openai-completions", "--model", "m",
			"--no-preflight", "--prompt-tokens", "8", "--output-tokens", strconv.Itoa(shardTokens), "--tokenizer", "cl100k_base",
			"--no-telemetry", "--workers", strconv.Itoa(workers), "--image", "servebench:test",
			"--name", name, "--namespace", k.ns, "--start-in", "6s"}, args...)
		code, manifest, stderr := run(t, args...)
		if code != 0 {
			t.Fatalf("kube job: exit %d\n%s", code, stderr)
		}
		k.run([]byte(manifest), "apply", "-f", "-")
	}

	// A ReadWriteMany claim, in a namespace that enforces the Pod Security
	// Standards' restricted profile: the Job's pods must be admitted.
	t.Run("complete", func(t *testing.T) {
		const requests = 30
		k := node.namespace(t, id+"-claim", "pod-security.kubernetes.io/enforce=restricted")
		node.claim(t, k, "results")
		job(t, k, "c6", "--claim", "results", "--concurrency", "6", "--requests", strconv.Itoa(requests))
		pods := node.runJob(t, k, "c6", workers, nil)
		k.run(nil, "wait", "--for=condition=complete", "job/c6", "--timeout=60s")
		if got := trueConditions(k, "c6"); !slices.Contains(got, "Complete") || slices.Contains(got, "Failed") {
			t.Errorf("the Job's true conditions %q; want Complete, not Failed", got)
		}
		var j batchv1.Job
		k.get(&j, "job", "c6")
		if j.Status.Succeeded != workers || j.Status.CompletedIndexes != "0-2" {
			t.Errorf("job status: %d succeeded, completed indexes %q; want %d and 0-2", j.Status.Succeeded, j.Status.CompletedIndexes, workers)
		}
		for i, p := range pods {
			if got := p.Annotations[batchv1.JobCompletionIndexAnnotation]; got != strconv.Itoa(i) {
				t.Errorf("pod %s: completion index %q, want %d", p.Name, got, i)
			}
		}
		s := shardDecode(t, "merged", node.report(t, 0, node.claimPath, "c6", workers, "--json"))
		if len(s.Points) != 1 || s.Points[0].Requests.Completed != requests || len(s.Run.Workers) != workers {
			t.Errorf("merged: %+v with %d workers; want one point of %d requests from %d workers", s.Points, len(s.Run.Workers), requests, workers)
		}
	})

	// A worker that fails (here killed, as an out-of-memory kill would)
	// fails its index only: the Job controller leaves the other workers
	// to finish their measurement, marks the Job failed naming the index,
	// and the merge names that worker.
	t.Run("failed worker", func(t *testing.T) {
		k := node.namespace(t, id+"-node-dir")
		job(t, k, "r40", "--host-path", node.hostPath, "--rate", "40", "--arrival", "constant", "--requests", "150")
		kill := func(i int, p *podProcess) bool {
			if i != 1 || !p.wrote(5) {
				return false
			}
			p.cmd.Process.Signal(syscall.SIGKILL)
			return true
		}
		node.runJob(t, k, "r40", workers, kill)
		k.run(nil, "wait", "--for=condition=failed", "job/r40", "--timeout=60s")
		if got := trueConditions(k, "r40"); !slices.Contains(got, "Failed") || slices.Contains(got, "Complete") {
			t.Errorf("the Job's true conditions %q; want Failed, not Complete", got)
		}
		var j batchv1.Job
		k.get(&j, "job", "r40")
		if j.Status.Succeeded != workers-1 || j.Status.FailedIndexes == nil || *j.Status.FailedIndexes != "1" {
			t.Errorf("job status: %d succeeded, failed indexes %v; want %d and 1", j.Status.Succeeded, j.Status.FailedIndexes, workers-1)
		}
		stderr := node.report(t, 1, node.hostPath, "r40", workers)
		if !strings.Contains(stderr, "worker 1 (") || !strings.Contains(stderr, "did not finish") || strings.Contains(stderr, "worker 0 (") || strings.Contains(stderr, "worker 2 (") {
			t.Errorf("merge: %q; want worker 1, and only it, named as not finished", stderr)
		}
	})
}

// trueConditions are the types of the Job's conditions that hold, read as
// docs/DISTRIBUTED.md's wait loop reads them.
func trueConditions(k kubectl, job string) []string {
	return strings.Fields(string(k.run(nil, "get", "job", job, "-o", `jsonpath={.status.conditions[?(@.status=="True")].type}`)))
}

// kubectl runs kubectl against one control plane and namespace.
type kubectl struct {
	t          *testing.T
	bin        string
	config, ns string
}

func (k kubectl) cmd(stdin []byte, args ...string) *exec.Cmd {
	c := exec.Command(k.bin, append([]string{"--kubeconfig", k.config, "--namespace", k.ns}, args...)...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	return c
}

// run is kubectl args, which must succeed; its output.
func (k kubectl) run(stdin []byte, args ...string) []byte {
	k.t.Helper()
	out, err := k.cmd(stdin, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		k.t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return out
}

// try is kubectl args whose failure is only logged (clean-up).
func (k kubectl) try(args ...string) {
	if out, err := k.cmd(nil, args...).CombinedOutput(); err != nil {
		k.t.Logf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// get decodes kubectl get args -o json into v.
func (k kubectl) get(v any, args ...string) {
	k.t.Helper()
	if err := json.Unmarshal(k.run(nil, append(append([]string{"get"}, args...), "-o", "json")...), v); err != nil {
		k.t.Fatalf("kubectl get %s: %v", strings.Join(args, " "), err)
	}
}

// patchStatus merges status into the pod's status, as a kubelet reports.
func (k kubectl) patchStatus(pod string, status map[string]any) {
	k.t.Helper()
	b, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		k.t.Fatal(err)
	}
	k.run(nil, "patch", "pod", pod, "--subresource=status", "--type=merge", "-p", string(b))
}
