package kube

import (
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// OptionError is an option a Job cannot be made with; Flag names the
// kube job flag that sets it.
type OptionError struct {
	Flag string
	Err  error
}

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

func optionErr(flag, format string, args ...any) error {
	return &OptionError{Flag: flag, Err: fmt.Errorf(format, args...)}
}

// Check refuses options a Job could not run with: no workers or image,
// not exactly one results volume, a Job or Secret name Kubernetes would
// refuse. Each error is an *OptionError.
func (o *Options) Check() error {
	switch {
	case o.Workers < 1:
		return optionErr("workers", "--workers: give how many workers share the load (at least 1)")
	case o.Image == "":
		return optionErr("image", "--image: give the container image holding servebench (docs/DISTRIBUTED.md builds one)")
	case (o.Claim == "") == (o.HostPath == ""):
		return optionErr("claim", "give one of --claim (a ReadWriteMany volume claim) or --host-path (a directory on each node) for the results")
	}
	if err := ValidName(o.Name); err != nil {
		return optionErr("name", "--name: %v", err)
	}
	for _, s := range []struct{ flag, name string }{{"api-key-secret", o.APIKeySecret}, {"credentials-secret", o.CredentialsSecret}} {
		if err := ValidSecretName(s.name); s.name != "" && err != nil {
			return optionErr(s.flag, "--%s: %v", s.flag, err)
		}
	}
	return nil
}

// WorkerArgs are the run flags of a kube job command line, as given and
// in order: every argument except the Job's own flags (own) with their
// values (every flag takes one unless isBool) and --start-at, which the
// Job passes as one mark for all workers.
func WorkerArgs(args []string, own, isBool func(name string) bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (!own(name) && name != "start-at") {
			out = append(out, a)
			continue
		}
		if !hasValue && !isBool(name) {
			i++ // the value that follows
		}
	}
	return out
}

// SetRunArgs sets the workers' run flags from run flags as WorkerArgs
// gives them: their credentials moved to the Secret (MoveCredentials),
// and --no-history added unless the user chose a history: a pod's
// history database would go with the pod; the merged run is the one to
// keep (history import of report --out's directory).
func (o *Options) SetRunArgs(args []string, historyChosen bool) {
	o.RunArgs, o.Credentials = MoveCredentials(args)
	if !historyChosen {
		o.RunArgs = append(o.RunArgs, "--no-history")
	}
}

// Write writes documents (Documents) as one YAML stream, for kubectl
// apply -f -.
func Write(w io.Writer, docs []any) error {
	for i, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		if i > 0 {
			b = append([]byte("---\n"), b...)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
