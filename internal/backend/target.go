package backend

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"github.com/servebench/servebench/internal/record"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// TargetOptions names a server the way a user gives it.
type TargetOptions struct {
	// URL is the server root, e.g. http://127.0.0.1:8000. A trailing /v1
	// is tolerated, and so is an API's endpoint path (/v1/chat/completions,
	// /api/generate, ...): the root is what precedes it, and PathAPI names
	// the API. user:password in it becomes a Basic Authorization header
	// and is never part of a URL servebench prints.
	URL string
	// APIKey is sent as a Bearer token (it wins over an Authorization
	// header and URL credentials).
	APIKey string
	// Header is sent with every request; a "Host" entry sets the Host.
	Header http.Header
	// TLS is the client's TLS configuration (see LoadTLS); nil means the
	// system's defaults.
	TLS *tls.Config
	// Name, when set, is how messages name the server in place of its URL
	// (a server servebench started itself has no address the user knows).
	Name string
}

// Target is one server, parsed once: its normalised base URL, the headers
// every request carries (credentials included), its TLS configuration, and
// a Redactor that knows every credential. Requests, the self-description,
// the preflight and tokenizer detection all reach the server through it,
// so they agree on where it is and on what must never be printed.
type Target struct {
	base   string
	header http.Header
	host   string
	tls    *tls.Config
	red    *Redactor
	hc     *http.Client
	// name is TargetOptions.Name.
	name string
	// pathAPI is the API whose endpoint path the URL ended in ("": none).
	pathAPI string
	// prefixed: the root has a path (a proxy's prefix, or a mistake).
	prefixed bool
}

// probeConns is the idle-connection pool of a target's short requests,
// which go a few at a time.
const probeConns = 4

// NewTarget checks o and returns its Target.
func NewTarget(o TargetOptions) (*Target, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q: want http://host:port or https://host:port", RedactURL(o.URL))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("base URL %q: must not have a query or fragment", u.Redacted())
	}
	h := o.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	t := &Target{host: h.Get("Host"), tls: o.TLS}
	h.Del("Host")
	var secrets []string
	// Every credential given, even one a later one overrides and that is
	// never sent: it must not be printed either.
	for name, vs := range o.Header {
		if IsCredentialHeader(name) {
			for _, v := range vs {
				secrets = append(secrets, headerSecrets(v)...)
			}
		}
	}
	if u.User != nil {
		pass, _ := u.User.Password()
		userpass := u.User.Username() + ":" + pass
		if h.Get("Authorization") == "" {
			h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(userpass)))
		}
		secrets = append(secrets, userinfoSecrets(u)...)
		u.User = nil
	}
	if o.APIKey != "" {
		h.Set("Authorization", "Bearer "+o.APIKey)
		secrets = append(secrets, o.APIKey)
	}
	secrets = append(secrets, headerSecrets(h.Get("Authorization"))...)
	u.Path, t.pathAPI = rootPath(u.Path)
	u.RawPath, t.prefixed = "", u.Path != ""
	t.base, t.header, t.red, t.name = u.String(), h, NewRedactor(secrets...), o.Name
	t.hc = &http.Client{
		Transport: NewTransport(o.TLS, probeConns),
		// A probe that is redirected is answered by the redirect itself.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return t, nil
}

// rootPath is the server root's path in a URL's path, without a trailing
// "/", "/v1" or API endpoint path (a URL copied from a client's settings
// often names the endpoint itself); api names the API whose endpoint it
// ended in, "" when none.
func rootPath(p string) (root, api string) {
	p = strings.TrimSuffix(p, "/")
	for _, name := range record.APIs() {
		if rest, ok := strings.CutSuffix(p, apis[name].path); ok {
			p, api = rest, name
			break
		}
	}
	return strings.TrimSuffix(strings.TrimSuffix(p, "/v1"), "/"), api
}

// LoadTLS builds a TLS configuration trusting the PEM certificates in
// caFile (when not empty) and skipping verification when insecure. Both
// empty give nil: the system's defaults.
func LoadTLS(caFile string, insecure bool) (*tls.Config, error) {
	if caFile == "" && !insecure {
		return nil, nil
	}
	c := &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // the user asked for it
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate found", caFile)
		}
	}
	return c, nil
}

// where names the server in a message: its name, or its URL.
func (t *Target) where() string { return cmp.Or(t.name, t.base) }

// theServer names the server as a sentence's subject: its name, or "the
// server at URL".
func (t *Target) theServer() string { return cmp.Or(t.name, "the server at "+t.base) }

// Base is the server root without a trailing "/" or "/v1" and without
// credentials: each API appends its own path, and it is safe to print.
func (t *Target) Base() string { return t.base }

// PathAPI is the API whose endpoint path the URL given ended in (it is
// not part of Base), or "" when it named none.
func (t *Target) PathAPI() string { return t.pathAPI }

// URL is the address of path (which starts with "/") on the server.
func (t *Target) URL(path string) string { return t.base + path }

// Header returns a copy of the headers every request carries.
func (t *Target) Header() http.Header { return t.header.Clone() }

// Host is the Host header requests carry ("" for the URL's host).
func (t *Target) Host() string { return t.host }

// TLS is the TLS configuration (nil for the system's defaults).
func (t *Target) TLS() *tls.Config { return t.tls }

// Redactor removes the target's credentials from text.
func (t *Target) Redactor() *Redactor { return t.red }

// Redact removes the target's credentials from s.
func (t *Target) Redact(s string) string { return t.red.String(s) }

// Client is the HTTP client for short requests that are not measured
// (preflight, self-description, tokenizer); redirects are not followed.
// Its transport is the load's (NewTransport).
func (t *Target) Client() *http.Client { return t.hc }

// CloseIdleConnections closes Client's idle connections.
func (t *Target) CloseIdleConnections() { t.hc.CloseIdleConnections() }

// NewRequest builds a request for path with the target's headers and Host.
func (t *Target) NewRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, t.URL(path), body)
	if err != nil {
		return nil, err
	}
	req.Header = t.Header()
	req.Host = t.host
	return req, nil
}

// RedactURL drops the credentials of a URL that may not parse.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	if strings.Contains(s, "@") {
		return redacted
	}
	return s
}
