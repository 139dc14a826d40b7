package kube

// The Kubernetes objects kube writes, as batch/v1 and v1 name their
// fields: only the fields servebench sets. The cli's tests decode what
// kube job prints strictly into the API's own types, and the cluster test
// applies it, so that a misnamed field fails there.

// TypeMeta is an object's apiVersion and kind.
type TypeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// ObjectMeta is an object's metadata.
type ObjectMeta struct {
	Name      string            `json:"name,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// Job is a batch/v1 Job. Status is always empty, as an object printed to
// be applied has it.
type Job struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Spec       JobSpec  `json:"spec"`
	Status     struct{} `json:"status"`
}

// JobSpec is a Job's spec.
type JobSpec struct {
	Parallelism          *int32          `json:"parallelism,omitempty"`
	Completions          *int32          `json:"completions,omitempty"`
	BackoffLimitPerIndex *int32          `json:"backoffLimitPerIndex,omitempty"`
	Template             PodTemplateSpec `json:"template"`
	CompletionMode       *string         `json:"completionMode,omitempty"`
}

// PodTemplateSpec is the pods' template.
type PodTemplateSpec struct {
	ObjectMeta `json:"metadata"`
	Spec       PodSpec `json:"spec"`
}

// PodSpec is a pod's spec.
type PodSpec struct {
	Volumes                      []Volume            `json:"volumes,omitempty"`
	Containers                   []Container         `json:"containers"`
	RestartPolicy                string              `json:"restartPolicy,omitempty"`
	AutomountServiceAccountToken *bool               `json:"automountServiceAccountToken,omitempty"`
	SecurityContext              *PodSecurityContext `json:"securityContext,omitempty"`
	Affinity                     *Affinity           `json:"affinity,omitempty"`
}

// Volume is a pod's volume: a claim or a node directory.
type Volume struct {
	Name                  string                             `json:"name"`
	HostPath              *HostPathVolumeSource              `json:"hostPath,omitempty"`
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
}

// HostPathVolumeSource is a directory on the node.
type HostPathVolumeSource struct {
	Path string  `json:"path"`
	Type *string `json:"type,omitempty"`
}

// PersistentVolumeClaimVolumeSource names a claim.
type PersistentVolumeClaimVolumeSource struct {
	ClaimName string `json:"claimName"`
}

// Container is a pod's container. Resources is always empty (no requests
// or limits).
type Container struct {
	Name            string           `json:"name"`
	Image           string           `json:"image,omitempty"`
	Command         []string         `json:"command,omitempty"`
	Args            []string         `json:"args,omitempty"`
	Env             []EnvVar         `json:"env,omitempty"`
	Resources       struct{}         `json:"resources"`
	VolumeMounts    []VolumeMount    `json:"volumeMounts,omitempty"`
	SecurityContext *SecurityContext `json:"securityContext,omitempty"`
}

// EnvVar is a container's variable, from a value or a source.
type EnvVar struct {
	Name      string        `json:"name"`
	Value     string        `json:"value,omitempty"`
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty"`
}

// EnvVarSource is where a variable's value comes from: a field of the pod,
// or a key of a Secret.
type EnvVarSource struct {
	FieldRef     *ObjectFieldSelector `json:"fieldRef,omitempty"`
	SecretKeyRef *SecretKeySelector   `json:"secretKeyRef,omitempty"`
}

// ObjectFieldSelector selects a field of the pod.
type ObjectFieldSelector struct {
	FieldPath string `json:"fieldPath"`
}

// SecretKeySelector selects a key of a Secret.
type SecretKeySelector struct {
	Name string `json:"name,omitempty"`
	Key  string `json:"key"`
}

// VolumeMount mounts a volume in a container.
type VolumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
}

// SecurityContext is a container's.
type SecurityContext struct {
	Capabilities             *Capabilities `json:"capabilities,omitempty"`
	AllowPrivilegeEscalation *bool         `json:"allowPrivilegeEscalation,omitempty"`
}

// Capabilities are those added to or dropped from a container.
type Capabilities struct {
	Drop []string `json:"drop,omitempty"`
}

// PodSecurityContext is a pod's.
type PodSecurityContext struct {
	RunAsUser      *int64          `json:"runAsUser,omitempty"`
	RunAsNonRoot   *bool           `json:"runAsNonRoot,omitempty"`
	FSGroup        *int64          `json:"fsGroup,omitempty"`
	SeccompProfile *SeccompProfile `json:"seccompProfile,omitempty"`
}

// SeccompProfile names a seccomp profile.
type SeccompProfile struct {
	Type string `json:"type"`
}

// Affinity holds the pods' anti-affinity.
type Affinity struct {
	PodAntiAffinity *PodAntiAffinity `json:"podAntiAffinity,omitempty"`
}

// PodAntiAffinity keeps pods apart.
type PodAntiAffinity struct {
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// WeightedPodAffinityTerm is a preference and its weight.
type WeightedPodAffinityTerm struct {
	Weight          int32           `json:"weight"`
	PodAffinityTerm PodAffinityTerm `json:"podAffinityTerm"`
}

// PodAffinityTerm is the pods a preference concerns, per topology domain.
type PodAffinityTerm struct {
	LabelSelector *LabelSelector `json:"labelSelector,omitempty"`
	TopologyKey   string         `json:"topologyKey"`
}

// LabelSelector selects by labels.
type LabelSelector struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// Secret is a v1 Secret, given as stringData (the API server encodes it).
type Secret struct {
	TypeMeta
	ObjectMeta `json:"metadata"`
	Type       string            `json:"type,omitempty"`
	StringData map[string]string `json:"stringData,omitempty"`
}
