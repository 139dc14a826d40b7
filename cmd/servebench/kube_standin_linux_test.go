//go:build linux

package main

// The stand-in kubelet TestKubeJobOnACluster runs the Job's pods with.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// standInNode is a Node object and the kubelet the test stands in for:
// it runs the pods the scheduler binds to it chrooted (the image stood in
// for as in TestKubeJobRunsInAScratchImage), with hostPath volumes under
// hostPath bind-mounted where the pod mounts them.
type standInNode struct {
	k        kubectl
	name     string
	pods     chrootPods
	hostPath string
	// claimPath is the directory of the PersistentVolume claim makes.
	claimPath string
	// mounted is the node directory mounted at target, the image's
	// volume path.
	mounted, target string
}

func (n *standInNode) unmount() {
	if n.mounted != "" {
		syscall.Unmount(n.target, syscall.MNT_DETACH)
		n.mounted = ""
	}
}

func newStandInNode(t *testing.T, k kubectl, name string, pods chrootPods) *standInNode {
	t.Helper()
	dir := t.TempDir()
	n := &standInNode{k: k, name: name, pods: pods, hostPath: filepath.Join(dir, "node-results"),
		claimPath: filepath.Join(dir, "shared-volume")}
	t.Cleanup(n.unmount) // before the image's root is removed
	now := time.Now().UTC().Format(time.RFC3339)
	res := map[string]string{"cpu": "2", "memory": "4Gi", "pods": "110"}
	node := map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": n.name, "labels": map[string]string{"kubernetes.io/hostname": n.name, "kubernetes.io/os": "linux"}},
	}
	b, _ := json.Marshal(node)
	k.run(b, "create", "-f", "-")
	t.Cleanup(func() { k.try("delete", "node", n.name, "--wait=false") })
	status, _ := json.Marshal(map[string]any{"status": map[string]any{
		"capacity": res, "allocatable": res,
		"conditions": []map[string]string{{"type": "Ready", "status": "True", "reason": "StandInKubelet",
			"message": "the test runs this node's pods", "lastHeartbeatTime": now, "lastTransitionTime": now}},
	}})
	k.run(nil, "patch", "node", n.name, "--subresource=status", "--type=merge", "-p", string(status))
	// The kubelet's heartbeat: its Lease renewed every 10 s, without which
	// the node lifecycle controller marks the node unreachable after 50 s.
	lease := kubectl{t: t, bin: k.bin, config: k.config, ns: "kube-node-lease"}
	renew := func() []byte {
		b, _ := json.Marshal(map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]string{"name": n.name},
			"spec": map[string]any{"holderIdentity": n.name, "leaseDurationSeconds": 40,
				"renewTime": time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00")}})
		return b
	}
	lease.run(renew(), "apply", "-f", "-")
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Second):
				if out, err := lease.cmd(renew(), "apply", "-f", "-").CombinedOutput(); err != nil {
					t.Logf("the node's heartbeat: %v\n%s", err, out)
				}
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-stopped; lease.try("delete", "lease", n.name) })
	return n
}

// namespace creates a namespace with labels (KEY=VALUE) and returns
// kubectl in it.
func (n *standInNode) namespace(t *testing.T, name string, labels ...string) kubectl {
	t.Helper()
	k := kubectl{t: t, bin: n.k.bin, config: n.k.config, ns: name}
	k.run(nil, "create", "namespace", name)
	t.Cleanup(func() { k.try("delete", "namespace", name, "--wait=false") })
	if len(labels) > 0 {
		k.run(nil, append([]string{"label", "namespace", name}, labels...)...)
	}
	return k
}

// claim makes a ReadWriteMany claim in k's namespace, bound by the
// control plane's volume binder to a PersistentVolume whose storage is
// claimPath on the node.
func (n *standInNode) claim(t *testing.T, k kubectl, name string) {
	t.Helper()
	pv := k.ns + "-" + name
	objs := []map[string]any{{
		"apiVersion": "v1", "kind": "PersistentVolume", "metadata": map[string]any{"name": pv},
		"spec": map[string]any{"capacity": map[string]string{"storage": "1Gi"}, "accessModes": []string{"ReadWriteMany"},
			"storageClassName": "", "persistentVolumeReclaimPolicy": "Retain", "hostPath": map[string]string{"path": n.claimPath}},
	}, {
		"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"accessModes": []string{"ReadWriteMany"}, "storageClassName": "", "volumeName": pv,
			"resources": map[string]any{"requests": map[string]string{"storage": "1Gi"}}},
	}}
	for _, o := range objs {
		b, _ := json.Marshal(o)
		k.run(b, "apply", "-f", "-")
	}
	t.Cleanup(func() { k.try("delete", "pv", pv, "--wait=false") })
	k.run(nil, "wait", "--for=jsonpath={.status.phase}=Bound", "pvc/"+name, "--timeout=30s")
}

// podProcess is one pod's container process.
type podProcess struct {
	pod     corev1.Pod
	cmd     *exec.Cmd
	started time.Time
	out     string // its run directory on the node
	done    chan struct{}
	err     error
}

// wrote reports whether the pod's run has written n records.
func (p *podProcess) wrote(n int) bool {
	b, err := os.ReadFile(filepath.Join(p.out, "records.jsonl"))
	return err == nil && bytes.Count(b, []byte("\n")) >= n
}

// runJob runs the Job's pods as the scheduler binds them to the node until
// each of its workers' pods has ended and its state is reported, stopping
// a pod the Job controller deletes. kill, when given, is asked about each
// running pod until it returns true. It returns the pods by index.
func (n *standInNode) runJob(t *testing.T, k kubectl, job string, workers int, kill func(int, *podProcess) bool) []corev1.Pod {
	t.Helper()
	procs := map[string]*podProcess{}
	reported := map[string]bool{}
	killed := false
	t.Cleanup(func() {
		for _, p := range procs {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		var list corev1.PodList
		k.get(&list, "pods", "-l", batchv1.JobNameLabel+"="+job)
		if len(list.Items) == 0 {
			// The Job controller could not create a pod: the API server's
			// reason (admission, validation) is in its event.
			if why := k.run(nil, "get", "events", "--field-selector", "reason=FailedCreate", "-o", "jsonpath={.items[*].message}"); len(why) > 0 {
				t.Fatalf("the Job controller could not create the pods: %s", why)
			}
		}
		for _, pod := range list.Items {
			p := procs[pod.Name]
			switch {
			case p == nil && pod.Spec.NodeName == n.name && pod.Status.Phase == corev1.PodPending && pod.DeletionTimestamp == nil:
				procs[pod.Name] = n.start(t, k, pod)
			case p != nil && pod.DeletionTimestamp != nil && !reported[pod.Name]:
				p.cmd.Process.Signal(syscall.SIGTERM) // the kubelet's graceful stop
			}
		}
		for name, p := range procs {
			if reported[name] {
				continue
			}
			i, _ := strconv.Atoi(p.pod.Annotations[batchv1.JobCompletionIndexAnnotation])
			if kill != nil && !killed && kill(i, p) {
				killed = true
			}
			select {
			case <-p.done:
				n.report1(t, k, p)
				reported[name] = true
			default:
			}
		}
		if len(reported) == workers {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(reported) != workers {
		events, _ := k.cmd(nil, "get", "events", "--sort-by=.lastTimestamp").CombinedOutput()
		t.Fatalf("after 90 s, %d of %d workers' pods have run and ended on the node; the namespace's events:\n%s", len(reported), workers, events)
	}
	pods := make([]corev1.Pod, workers)
	for _, p := range procs {
		i, err := strconv.Atoi(p.pod.Annotations[batchv1.JobCompletionIndexAnnotation])
		if err != nil || i < 0 || i >= workers {
			t.Fatalf("pod %s: completion index annotation %q", p.pod.Name, p.pod.Annotations[batchv1.JobCompletionIndexAnnotation])
		}
		pods[i] = p.pod
	}
	return pods
}

// start runs a bound pod's one container, as the kubelet would: its
// environment resolved from the pod the API server holds, $(VAR)
// expanded, its hostPath volume created and mounted, its user and fsGroup.
func (n *standInNode) start(t *testing.T, k kubectl, pod corev1.Pod) *podProcess {
	t.Helper()
	if len(pod.Spec.Containers) != 1 || len(pod.Spec.Volumes) != 1 || len(pod.Spec.Containers[0].VolumeMounts) != 1 {
		t.Fatalf("pod %s: want one container and one volume, the results (no service account token): %+v", pod.Name, pod.Spec)
	}
	c := pod.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = expandVars(e.Value, env)
		case e.ValueFrom.FieldRef != nil && strings.HasPrefix(e.ValueFrom.FieldRef.FieldPath, "metadata.annotations['"):
			key := strings.TrimSuffix(strings.TrimPrefix(e.ValueFrom.FieldRef.FieldPath, "metadata.annotations['"), "']")
			env[e.Name] = pod.Annotations[key]
		default:
			t.Fatalf("pod %s env %s: a source the stand-in kubelet does not resolve: %+v", pod.Name, e.Name, e.ValueFrom)
		}
	}
	host := n.volumeDir(t, k, pod)
	mount := c.VolumeMounts[0].MountPath
	if n.mounted != host {
		n.unmount()
		target := n.pods.volume(mount)
		if err := os.MkdirAll(target, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount(host, target, "", syscall.MS_BIND, ""); err != nil {
			t.Fatalf("mount the node's %s at %s: %v", host, target, err)
		}
		n.mounted, n.target = host, target
	}
	args := append(append([]string{}, c.Command...), c.Args...)
	for j, a := range args {
		args[j] = expandVars(a, env)
	}
	uid, group := uint32(65532), uint32(0) // the image's user, when the pod names none
	if sc := pod.Spec.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = uint32(*sc.RunAsUser)
		}
		if sc.FSGroup != nil {
			group = uint32(*sc.FSGroup)
		}
		if sc.RunAsNonRoot != nil && *sc.RunAsNonRoot && uid == 0 {
			t.Fatalf("pod %s: runAsNonRoot, but it would run as root", pod.Name)
		}
	}
	cmd := n.pods.command(podSpec{args: args, env: env, uid: uid, fsGroup: group, mount: mount, volume: host})
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatalf("pod %s: %v", pod.Name, err)
	}
	p := &podProcess{pod: pod, cmd: cmd, started: time.Now(), done: make(chan struct{}),
		out: filepath.Join(host, strings.TrimPrefix(outArg(args), mount))}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	now := p.started.UTC().Format(time.RFC3339)
	k.patchStatus(pod.Name, map[string]any{"phase": "Running", "startTime": now,
		"conditions": []map[string]string{{"type": "Ready", "status": "True", "lastTransitionTime": now}},
		"containerStatuses": []map[string]any{{"name": c.Name, "image": c.Image, "imageID": "", "ready": true, "restartCount": 0,
			"started": true, "state": map[string]any{"running": map[string]string{"startedAt": now}}}}})
	return p
}

// volumeDir is the node directory of the pod's one volume, prepared as a
// kubelet prepares it: a hostPath created if missing (DirectoryOrCreate,
// by root); a claim's PersistentVolume (here a directory on the node)
// given to the pod's fsGroup, group-writable and setgid, as the kubelet
// does for a volume that supports ownership management.
func (n *standInNode) volumeDir(t *testing.T, k kubectl, pod corev1.Pod) string {
	t.Helper()
	v := pod.Spec.Volumes[0]
	var dir string
	switch {
	case v.HostPath != nil:
		dir = v.HostPath.Path
	case v.PersistentVolumeClaim != nil:
		var pvc corev1.PersistentVolumeClaim
		k.get(&pvc, "pvc", v.PersistentVolumeClaim.ClaimName)
		var pv corev1.PersistentVolume
		k.get(&pv, "pv", pvc.Spec.VolumeName)
		if pv.Spec.HostPath == nil {
			t.Fatalf("pod %s: claim %s is bound to %s, not a volume on this node", pod.Name, pvc.Name, pv.Name)
		}
		dir = pv.Spec.HostPath.Path
	default:
		t.Fatalf("pod %s: a volume the stand-in kubelet does not provide: %+v", pod.Name, v)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if sc := pod.Spec.SecurityContext; v.PersistentVolumeClaim != nil && sc != nil && sc.FSGroup != nil {
		if err := os.Chown(dir, 0, int(*sc.FSGroup)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o775|os.ModeSetgid); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// report1 reports an ended pod's phase and exit code.
func (n *standInNode) report1(t *testing.T, k kubectl, p *podProcess) {
	t.Helper()
	code, phase, reason := 0, corev1.PodSucceeded, "Completed"
	if p.err != nil {
		code, phase, reason = -1, corev1.PodFailed, "Error"
		if ee, ok := p.err.(*exec.ExitError); ok {
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		}
		t.Logf("pod %s ended: %v\n%s", p.pod.Name, p.err, p.cmd.Stderr.(*bytes.Buffer).String())
	}
	k.patchStatus(p.pod.Name, map[string]any{"phase": phase,
		"conditions": []map[string]string{{"type": "Ready", "status": "False", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}},
		"containerStatuses": []map[string]any{{"name": p.pod.Spec.Containers[0].Name, "image": p.pod.Spec.Containers[0].Image, "imageID": "", "ready": false, "restartCount": 0, "started": false,
			"state": map[string]any{"terminated": map[string]any{"exitCode": code, "reason": reason,
				"startedAt": p.started.UTC().Format(time.RFC3339), "finishedAt": time.Now().UTC().Format(time.RFC3339)}}}}})
}

// report merges the Job's workers' directories on the node, wanting exit
// code want; stdout when it is 0, else stderr.
func (n *standInNode) report(t *testing.T, want int, volume, job string, workers int, flags ...string) string {
	t.Helper()
	args := append([]string{"report"}, flags...)
	for i := range workers {
		args = append(args, filepath.Join(volume, job, "worker-"+strconv.Itoa(i)))
	}
	code, stdout, stderr := run(t, args...)
	if code != want {
		t.Fatalf("report of the workers' directories: exit %d, want %d\n%s", code, want, stderr)
	}
	if want == 0 {
		return stdout
	}
	return stderr
}

// outArg is the --out= argument's directory.
func outArg(args []string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--out="); ok {
			return v
		}
	}
	return ""
}
