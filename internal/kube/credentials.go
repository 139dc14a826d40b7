package kube

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/servebench/servebench/internal/backend"
)

// credentialFlags are the run flags whose values may hold a credential:
// a header's value, and a URL's user:password.
var credentialFlags = map[string]bool{"header": true, "url": true, "metrics-url": true, "gpu-metrics-url": true, "host-metrics-url": true}

// MoveCredentials takes the credentials out of run's arguments: each
// credential header's value and each URL's user:password becomes a
// reference $(VAR) that the kubelet expands from the worker's variable VAR,
// set from a Secret's key. Anyone who can read Pods sees the reference only.
func MoveCredentials(args []string) ([]string, []Credential) {
	out := append([]string(nil), args...)
	var creds []Credential
	taken := map[string]int{}
	for i := 0; i < len(out); i++ {
		name, v, inline := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
		if !strings.HasPrefix(out[i], "-") || !credentialFlags[name] {
			continue
		}
		at := i
		if !inline {
			if at = i + 1; at >= len(out) {
				break
			}
			v, i = out[at], at
		}
		ref, c, ok := credentialOf(name, v)
		if !ok {
			continue
		}
		// The same header or flag twice: its own key each time.
		if taken[c.Key]++; taken[c.Key] > 1 {
			n := strconv.Itoa(taken[c.Key])
			c.Key, c.Env = c.Key+"-"+n, c.Env+"_"+n
		}
		ref = strings.ReplaceAll(ref, "$(ENV)", "$("+c.Env+")")
		creds = append(creds, c)
		if inline {
			out[at] = strings.SplitN(out[at], "=", 2)[0] + "=" + ref
		} else {
			out[at] = ref
		}
	}
	return out, creds
}

// credentialOf is the credential in flag's value v, and v with it replaced
// by "$(ENV)"; ok is false when v holds none.
func credentialOf(flag, v string) (ref string, c Credential, ok bool) {
	if flag == "header" {
		name, value, found := strings.Cut(v, ":")
		name = strings.TrimSpace(name)
		if !found || !backend.IsCredentialHeader(name) || strings.TrimSpace(value) == "" {
			return "", c, false
		}
		return name + ": $(ENV)", Credential{Key: "header-" + secretKey(name), Env: "SERVEBENCH_HEADER_" + envName(name),
			Value: strings.TrimSpace(value)}, true
	}
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return "", c, false
	}
	// user:password as written (escaped), between "//" and the host
	scheme, rest, _ := strings.Cut(v, "//")
	authority := rest
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		authority = rest[:end]
	}
	at := strings.LastIndex(authority, "@")
	return scheme + "//$(ENV)" + rest[at:], Credential{Key: flag + "-userinfo", Env: "SERVEBENCH_" + envName(flag) + "_USERINFO",
		Value: authority[:at]}, true
}

// secretKey is name as a Secret's key: lower case, [-._a-z0-9].
func secretKey(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			return r
		}
		return '-'
	}, name)
}

// envName is name as a variable's: upper case, [A-Z0-9_].
func envName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}

// CredentialsNote tells where the workers' credentials are: in the Secret
// printed with the Job, or in the Secret the user named, which must hold
// these keys.
func CredentialsNote(o Options, printed bool) string {
	var keys, froms []string
	for _, c := range o.Credentials {
		keys = append(keys, c.Key)
		froms = append(froms, "--from-literal="+c.Key+"=...")
	}
	if printed {
		return fmt.Sprintf("note: the Secret %s printed before the Job holds the credentials of the run flags (%s), which the workers' arguments refer to: "+
			"keep this output private, or create the Secret yourself and give --credentials-secret NAME", o.CredentialsSecret, strings.Join(keys, ", "))
	}
	return fmt.Sprintf("note: the workers read the credentials of the run flags from the Secret %s, which must hold the keys %s "+
		"(kubectl create secret generic %s %s)", o.CredentialsSecret, strings.Join(keys, ", "), o.CredentialsSecret, strings.Join(froms, " "))
}

// Documents are what a Job needs applied, in order: the Secret holding its
// credentials when there are some and no Secret of the user's is named
// (then named NAME-credentials), then the Job. printed says whether the
// Secret is among them.
func Documents(o *Options) (docs []any, printed bool) {
	if len(o.Credentials) > 0 && o.CredentialsSecret == "" {
		o.CredentialsSecret = o.Name + "-credentials"
		docs, printed = append(docs, NewSecret(*o)), true
	}
	return append(docs, NewJob(*o)), printed
}
