// Package kube writes the Kubernetes objects that run servebench as many
// workers: an Indexed Job whose completion index is each worker's shard
// (docs/DISTRIBUTED.md), and the Secret that carries the credentials
// its arguments must not.
package kube

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
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
	// Credentials reach the workers through the Secret CredentialsSecret,
	// never in their arguments, which refer to them as $(Env).
	Credentials       []Credential
	CredentialsSecret string
	// RunArgs are run's flags as the user gave them, passed on verbatim.
	RunArgs []string
	// StartAt is the mark every worker starts its first point at.
	StartAt time.Time
}

// StartMark is the mark the workers start at: at when given (run's
// --start-at), else in from now, to the second, which leaves the pods
// time to be scheduled, pull the image and prepare their requests.
func StartMark(at time.Time, in time.Duration, now time.Time) time.Time {
	if !at.IsZero() {
		return at
	}
	return now.Add(in).Truncate(time.Second)
}

// A Credential is a value a worker needs that anyone who can read Pods
// must not see: the Secret's key Key holds it, the container's variable
// Env is set from that key, and the kubelet expands $(Env) in the
// arguments.
type Credential struct {
	Key, Env, Value string
}

// dnsLabel is an RFC 1123 label, the form of a Job's name.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidName reports a Job name Kubernetes would refuse (a DNS label,
// short enough for the pod names the controller derives from it).
func ValidName(name string) error {
	if !dnsLabel.MatchString(name) {
		return fmt.Errorf("%q: lower case letters, digits and '-', starting and ending with a letter or digit (e.g. bench-a)", name)
	}
	if len(name) > 48 {
		return fmt.Errorf("%q: at most 48 characters, so that pod names derived from it stay valid", name)
	}
	return nil
}

// dnsSubdomain is an RFC 1123 subdomain, the form of a Secret's name.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// ValidSecretName reports a Secret name Kubernetes would refuse.
func ValidSecretName(name string) error {
	if !dnsSubdomain.MatchString(name) || len(name) > 253 {
		return fmt.Errorf("%q: lower case letters, digits, '-' and '.', starting and ending with a letter or digit (e.g. llm-key)", name)
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

// NewJob is the Indexed Job running o.Workers workers of one sharded run.
func NewJob(o Options) *Job {
	n := int32(o.Workers)
	indexed := "Indexed"
	// No retries, and no worker's failure stops the others: an index
	// fails at its pod's first failure (a worker restarted after the mark
	// would measure another load than the others), while the other
	// workers finish their measurement and the merge names the failed one.
	// A Job-wide backoffLimit of 0 would instead fail the Job at the first
	// failure and stop every other worker mid-run.
	retries := int32(0)
	noToken := false
	return &Job{
		TypeMeta:   TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels(o)},
		Spec: JobSpec{
			CompletionMode:       &indexed,
			Completions:          &n,
			Parallelism:          &n,
			BackoffLimitPerIndex: &retries,
			Template: PodTemplateSpec{
				ObjectMeta: ObjectMeta{Labels: labels(o)},
				Spec: PodSpec{
					RestartPolicy: "Never",
					Containers:    []Container{worker(o)},
					Volumes:       []Volume{results(o)},
					Affinity:      spread(labels(o)),
					// The workers never call the API server: no token.
					AutomountServiceAccountToken: &noToken,
					SecurityContext:              security(o),
				},
			},
		},
	}
}

// labels mark the Job, its pods and its Secret as this run's.
func labels(o Options) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "servebench", "app.kubernetes.io/instance": o.Name}
}

// NewSecret is the Secret CredentialsSecret holding o.Credentials.
func NewSecret(o Options) *Secret {
	data := map[string]string{}
	for _, c := range o.Credentials {
		data[c.Key] = c.Value
	}
	return &Secret{
		TypeMeta:   TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: ObjectMeta{Name: o.CredentialsSecret, Namespace: o.Namespace, Labels: labels(o)},
		Type:       "Opaque",
		StringData: data,
	}
}

// worker is the container: servebench run with the user's flags, its
// shard, one start mark and its own run directory.
func worker(o Options) Container {
	args := append([]string{"run"}, o.RunArgs...)
	args = append(args,
		"--shard="+"$("+IndexEnv+")/"+strconv.Itoa(o.Workers),
		"--start-at="+o.StartAt.UTC().Format(time.RFC3339Nano),
		"--out="+OutDir(o.Name, -1))
	env := []EnvVar{{Name: IndexEnv, ValueFrom: &EnvVarSource{
		FieldRef: &ObjectFieldSelector{FieldPath: "metadata.annotations['" + indexAnnotation + "']"}}}}
	if o.APIKeySecret != "" {
		env = append(env, EnvVar{Name: o.APIKeyEnv, ValueFrom: &EnvVarSource{
			SecretKeyRef: &SecretKeySelector{Name: o.APIKeySecret, Key: apiKeySecretKey}}})
	}
	for _, c := range o.Credentials {
		env = append(env, EnvVar{Name: c.Env, ValueFrom: &EnvVarSource{
			SecretKeyRef: &SecretKeySelector{Name: o.CredentialsSecret, Key: c.Key}}})
	}
	escalate := false
	return Container{
		Name: container, Image: o.Image, Command: []string{Binary}, Args: args, Env: env,
		VolumeMounts: []VolumeMount{{Name: volume, MountPath: ResultsDir}},
		// servebench needs no privilege (the Pod Security Standards'
		// restricted profile, with the pod's non-root user and seccomp).
		SecurityContext: &SecurityContext{AllowPrivilegeEscalation: &escalate,
			Capabilities: &Capabilities{Drop: []string{"ALL"}}},
	}
}

// results is the volume the workers' run directories go to.
func results(o Options) Volume {
	v := Volume{Name: volume}
	if o.Claim != "" {
		v.PersistentVolumeClaim = &PersistentVolumeClaimVolumeSource{ClaimName: o.Claim}
		return v
	}
	dir := "DirectoryOrCreate"
	v.HostPath = &HostPathVolumeSource{Path: o.HostPath, Type: &dir}
	return v
}

// spread prefers one worker per node: workers sharing a node share its
// CPUs and network, the limit sharding is there to lift.
func spread(labels map[string]string) *Affinity {
	return &Affinity{PodAntiAffinity: &PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: PodAffinityTerm{
				LabelSelector: &LabelSelector{MatchLabels: labels},
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
func security(o Options) *PodSecurityContext {
	seccomp := &SeccompProfile{Type: "RuntimeDefault"}
	if o.HostPath != "" {
		root := int64(0)
		return &PodSecurityContext{RunAsUser: &root, SeccompProfile: seccomp}
	}
	group, nonRoot := int64(imageUser), true
	return &PodSecurityContext{FSGroup: &group, RunAsNonRoot: &nonRoot, SeccompProfile: seccomp}
}
