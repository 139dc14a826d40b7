// Package kube writes the Kubernetes objects that run servebench as many
// workers: an Indexed Job whose completion index is each worker's shard
// (docs/DISTRIBUTED.md). It builds k8s.io/api types, so that what it
// prints is what the API server decodes.
package kube

import (
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Paths inside a worker's container: the binary the Dockerfile installs,
// and where the results volume is mounted.
const (
	Binary     = "/servebench"
	ResultsDir = "/results"
	// IndexEnv is the variable the Job controller sets to the pod's
	// completion index.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// indexAnnotation carries the completion index on the pod; the
	// variable is declared from it so that $(JOB_COMPLETION_INDEX) in the
	// arguments expands on every cluster version that has Indexed Jobs.
	indexAnnotation = "batch.kubernetes.io/job-completion-index"
	apiKeySecretKey = "api-key"
	container       = "worker"
	volume          = "results"
)

// Options are a Job's workers, image, results volume and run arguments.
type Options struct {
	Workers         int
	Image           string
	Name, Namespace string
	// Claim names a ReadWriteMany PersistentVolumeClaim; HostPath a node
	// directory instead. One of the two.
	Claim, HostPath string
	// APIKeySecret, when set, is a Secret whose key "api-key" becomes the
	// variable APIKeyEnv that run reads the API key from.
	APIKeySecret, APIKeyEnv string
	// RunArgs are run's flags as the user gave them, passed on verbatim.
	RunArgs []string
	// StartAt is the mark every worker starts its first point at.
	StartAt time.Time
}

// ValidName reports a Job name Kubernetes would refuse (a DNS label,
// short enough for the pod names the controller derives from it).
func ValidName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%q: %s", name, errs[0])
	}
	if len(name) > 48 {
		return fmt.Errorf("%q: at most 48 characters, so that pod names derived from it stay valid", name)
	}
	return nil
}

// OutDir is worker i's run directory inside its container, with the
// completion index left for Kubernetes to expand when i < 0.
func OutDir(name string, i int) string {
	idx := "$(" + IndexEnv + ")"
	if i >= 0 {
		idx = strconv.Itoa(i)
	}
	return ResultsDir + "/" + name + "/worker-" + idx
}

// Job is the Indexed Job running o.Workers workers of one sharded run.
func Job(o Options) *batchv1.Job {
	n := int32(o.Workers)
	indexed := batchv1.IndexedCompletion
	// No retries, and no worker's failure stops the others: an index
	// fails at its pod's first failure (a worker restarted after the mark
	// would measure another load than the others), while the other
	// workers finish their measurement and the merge names the failed one.
	// A Job-wide backoffLimit of 0 would instead fail the Job at the first
	// failure and stop every other worker mid-run.
	retries := int32(0)
	noToken := false
	labels := map[string]string{"app.kubernetes.io/name": "servebench", "app.kubernetes.io/instance": o.Name}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:       &indexed,
			Completions:          &n,
			Parallelism:          &n,
			BackoffLimitPerIndex: &retries,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{worker(o)},
					Volumes:       []corev1.Volume{results(o)},
					Affinity:      spread(labels),
					// The workers never call the API server: no token.
					AutomountServiceAccountToken: &noToken,
					SecurityContext:              security(o),
				},
			},
		},
	}
}

// worker is the container: servebench run with the user's flags, its
// shard, one start mark and its own run directory.
func worker(o Options) corev1.Container {
	args := append([]string{"run"}, o.RunArgs...)
	args = append(args,
		"--shard="+"$("+IndexEnv+")/"+strconv.Itoa(o.Workers),
		"--start-at="+o.StartAt.UTC().Format(time.RFC3339),
		"--out="+OutDir(o.Name, -1))
	env := []corev1.EnvVar{{Name: IndexEnv, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + indexAnnotation + "']"}}}}
	if o.APIKeySecret != "" {
		env = append(env, corev1.EnvVar{Name: o.APIKeyEnv, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: o.APIKeySecret}, Key: apiKeySecretKey}}})
	}
	escalate := false
	return corev1.Container{
		Name: container, Image: o.Image, Command: []string{Binary}, Args: args, Env: env,
		VolumeMounts: []corev1.VolumeMount{{Name: volume, MountPath: ResultsDir}},
		// servebench needs no privilege (the Pod Security Standards'
		// restricted profile, with the pod's non-root user and seccomp).
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &escalate,
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
	}
}

// results is the volume the workers' run directories go to.
func results(o Options) corev1.Volume {
	v := corev1.Volume{Name: volume}
	if o.Claim != "" {
		v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.Claim}
		return v
	}
	dir := corev1.HostPathDirectoryOrCreate
	v.HostPath = &corev1.HostPathVolumeSource{Path: o.HostPath, Type: &dir}
	return v
}

// spread prefers one worker per node: workers sharing a node share its
// CPUs and network, the limit sharding is there to lift.
func spread(labels map[string]string) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
				TopologyKey:   "kubernetes.io/hostname",
			},
		}},
	}}
}

// imageUser is the user the Dockerfile runs as.
const imageUser = 65532

// security gives the image's user the results volume: a claim is made
// writable to its group (fsGroup), and the pod meets the Pod Security
// Standards' restricted profile, so that a namespace enforcing it admits
// the workers. A node directory, created by the kubelet as root, can only
// be written as root (and a hostPath volume is outside the restricted and
// baseline profiles anyway).
func security(o Options) *corev1.PodSecurityContext {
	seccomp := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	if o.HostPath != "" {
		root := int64(0)
		return &corev1.PodSecurityContext{RunAsUser: &root, SeccompProfile: seccomp}
	}
	group, nonRoot := int64(imageUser), true
	return &corev1.PodSecurityContext{FSGroup: &group, RunAsNonRoot: &nonRoot, SeccompProfile: seccomp}
}
