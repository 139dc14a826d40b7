package kube

import (
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// OptionError is an option a Job cannot be made with; Flag names the
// kube job flag that sets it, and Example, when set, what to run instead
// of the usual example.
type OptionError struct {
	Flag    string
	Err     error
	Example string
}

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// jobExample is a kube job command line with the options every Job needs.
const jobExample = "servebench kube job --url http://SERVER:8000 --model M --workers 4 --image IMAGE --claim PVC"

// Hint is a command line that gives the option; Usage says the option was
// given wrong.
func (e *OptionError) Hint() string {
	switch {
	case e.Example != "":
		return e.Example
	case e.Flag == "name":
		return jobExample + " --name bench-a"
	case e.Flag == "api-key-secret", e.Flag == "credentials-secret":
		return jobExample + " --" + e.Flag + " llm-key"
	}
	return jobExample
}
func (e *OptionError) Usage() bool { return true }

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

// CheckAPIKey refuses an API key that the workers would not get, key
// being what the variable APIKeyEnv holds here: only a Secret takes it to
// them.
func (o *Options) CheckAPIKey(key string) error {
	switch {
	case o.APIKeySecret != "" && o.APIKeyEnv == "":
		return &OptionError{Flag: "api-key-secret", Example: "servebench kube job --api-key-secret NAME --api-key-env SERVEBENCH_API_KEY ...",
			Err: fmt.Errorf("--api-key-secret %s: --api-key-env is empty, so the workers would not read the key", o.APIKeySecret)}
	case key != "" && o.APIKeySecret == "":
		return &OptionError{Flag: "api-key-secret", Example: fmt.Sprintf(`kubectl create secret generic NAME --from-literal=api-key="$%s", then servebench kube job --api-key-secret NAME ...`, o.APIKeyEnv),
			Err: fmt.Errorf("$%s holds an API key that would not reach the workers: give --api-key-secret NAME, a Secret whose key api-key holds it (or unset %s if the server needs no key)",
				o.APIKeyEnv, o.APIKeyEnv)}
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

// Print writes the Job to w, after the Secret holding its credentials
// unless the user named one of theirs, and says on notes where the
// credentials are (CredentialsNote).
func Print(w, notes io.Writer, o *Options) error {
	if len(o.Credentials) == 0 && o.CredentialsSecret != "" {
		return &OptionError{Flag: "credentials-secret", Example: "servebench kube job --header 'Authorization: Bearer KEY' --credentials-secret NAME ...",
			Err: fmt.Errorf("--credentials-secret %s: no --header or URL given carries a credential", o.CredentialsSecret)}
	}
	docs, printed := Documents(o)
	if len(o.Credentials) > 0 {
		fmt.Fprintln(notes, CredentialsNote(*o, printed))
	}
	return Write(w, docs)
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
