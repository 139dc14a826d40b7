package backend

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// redacted replaces a credential in any text servebench writes.
const redacted = "[redacted]"

// minSecret is the shortest value treated as a credential: replacing every
// "ab" in every message would garble them and protect nothing.
const minSecret = 4

// credentialWords mark a header as carrying a credential when its name
// contains one (case-insensitive): Authorization, Proxy-Authorization,
// X-Api-Key, Api-Key, Cookie, X-Auth-Token, X-Session-Id and the like.
var credentialWords = []string{"auth", "key", "token", "secret", "cookie", "password", "session", "credential"}

// IsCredentialHeader reports whether a header, by its name, carries a
// credential.
func IsCredentialHeader(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// headerSecrets returns the credentials inside one header value: the
// value, the credential after an auth scheme ("Bearer X", "Basic X"), the
// user:password a Basic credential decodes to and its password, and each
// cookie's value.
func headerSecrets(v string) []string {
	out := []string{v}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
	if ok {
		cred = strings.TrimSpace(cred)
		out = append(out, cred)
		if strings.EqualFold(scheme, "basic") {
			if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
				_, pass, _ := strings.Cut(string(dec), ":")
				out = append(out, string(dec), pass)
			}
		}
	}
	for _, c := range strings.Split(v, ";") {
		if _, val, ok := strings.Cut(c, "="); ok {
			out = append(out, strings.TrimSpace(val))
		}
	}
	return out
}

// userinfoSecrets are the credentials of a URL's user:password: the
// password, and user:password (which a Basic header encodes).
func userinfoSecrets(u *url.URL) []string {
	if u.User == nil {
		return nil
	}
	pass, _ := u.User.Password()
	return []string{pass, u.User.Username() + ":" + pass, u.User.String()}
}

// NewURLRedactor returns a Redactor for the user:password of each URL
// (those that do not parse have none).
func NewURLRedactor(urls ...string) *Redactor {
	var secrets []string
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil {
			secrets = append(secrets, userinfoSecrets(u)...)
		}
	}
	return NewRedactor(secrets...)
}

// A Redactor replaces credentials, and the encodings in which a server may
// echo them (base64, URL escaping, JSON escaping), with "[redacted]". The
// zero value and nil redact nothing. Safe for concurrent use.
type Redactor struct {
	r       *strings.Replacer
	secrets []string
}

// NewRedactor returns a Redactor for secrets; values shorter than
// minSecret bytes are ignored.
func NewRedactor(secrets ...string) *Redactor {
	var forms, kept []string
	for _, s := range secrets {
		if len(s) < minSecret {
			continue
		}
		kept = append(kept, s)
		forms = append(forms, secretForms(s)...)
	}
	if len(forms) == 0 {
		return &Redactor{}
	}
	// Longest first: at one position the replacer takes the first match in
	// argument order, so a credential is not left half-replaced by a
	// shorter one inside it.
	slices.SortFunc(forms, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	forms = slices.Compact(forms)
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, redacted)
	}
	return &Redactor{r: strings.NewReplacer(pairs...), secrets: kept}
}

// JoinRedactors returns a Redactor for the credentials of all of rs (nil
// ones included: they know none).
func JoinRedactors(rs ...*Redactor) *Redactor {
	var secrets []string
	for _, r := range rs {
		if r != nil {
			secrets = append(secrets, r.secrets...)
		}
	}
	return NewRedactor(secrets...)
}

// secretForms are s and the ways a server may echo it.
func secretForms(s string) []string {
	j, _ := json.Marshal(s)
	forms := []string{
		s,
		base64.StdEncoding.EncodeToString([]byte(s)),
		base64.RawStdEncoding.EncodeToString([]byte(s)),
		base64.URLEncoding.EncodeToString([]byte(s)),
		base64.RawURLEncoding.EncodeToString([]byte(s)),
		url.QueryEscape(s),
		url.PathEscape(s),
		string(j[1 : len(j)-1]),
		// Some JSON encoders escape "/" as well.
		strings.ReplaceAll(string(j[1:len(j)-1]), "/", `\/`),
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for offset := range 3 {
			forms = append(forms, encodedInner(enc, s, offset))
		}
	}
	out := forms[:0]
	for _, f := range forms {
		if len(f) >= minSecret {
			out = append(out, f)
		}
	}
	return out
}

// encodedInner is what base64 makes of s wherever the encoded text has s
// start offset bytes past a multiple of 3: the characters of the groups
// that hold s's bytes alone. The groups s shares with the bytes before
// and after it depend on those bytes, and are left out (with offset 0
// and a length that is a multiple of 3, nothing is).
func encodedInner(enc *base64.Encoding, s string, offset int) string {
	b := make([]byte, offset, offset+len(s))
	e := enc.EncodeToString(append(b, s...))
	start, end := 0, 4*((offset+len(s))/3)
	if offset > 0 {
		start = 4
	}
	if end <= start {
		return ""
	}
	return e[start:end]
}

// String redacts s.
func (r *Redactor) String(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Bytes redacts b (b itself when there is nothing to redact).
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || r.r == nil {
		return b
	}
	var buf bytes.Buffer
	r.r.WriteString(&buf, string(b))
	return buf.Bytes()
}

// NewLaunchRedactor knows the credentials the log of a server started
// with environment env (K=V, the inherited variables and those given) may
// print: the values of its credential variables (HF_TOKEN and the like),
// and the credentials of a target reached with opts (API key, credential
// headers) whatever its URL.
func NewLaunchRedactor(opts TargetOptions, env []string) *Redactor {
	var secrets []string
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && IsCredentialHeader(k) {
			secrets = append(secrets, v)
		}
	}
	opts.URL = "http://127.0.0.1"
	var target *Redactor
	if t, err := NewTarget(opts); err == nil {
		target = t.Redactor()
	}
	return JoinRedactors(target, NewRedactor(secrets...))
}
