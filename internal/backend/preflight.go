package backend

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
)

// PreflightTimeout bounds the preflight: a server that cannot list its
// models within it is not ready to be measured.
const PreflightTimeout = 10 * time.Second

// maxModelList bounds the model list read (gateways list thousands).
const maxModelList = 8 << 20

// Kinds of PreflightError.
const (
	PreflightDNS      = "dns"     // the host name does not resolve
	PreflightRefused  = "refused" // nothing listens at the address
	PreflightScheme   = "scheme"  // https to a plain-HTTP port, or the reverse
	PreflightTLS      = "tls"     // the certificate is not trusted
	PreflightNoAnswer = "timeout" // no answer within PreflightTimeout
	PreflightNetwork  = "network" // any other failure to reach the server
	PreflightAuth     = "auth"    // 401 or 403
	PreflightModel    = "model"   // the model is not among those served
	PreflightNotFound = "path"    // the model list and the API's endpoint answer 404
)

// PreflightError is a reason not to measure a server at all.
type PreflightError struct {
	Kind string // one of the Preflight* kinds
	Msg  string // what was wrong, with the server's own words (redacted)
	// Models are the served names, for PreflightModel.
	Models []string
}

func (e *PreflightError) Error() string { return e.Msg }

// Hint says what to do about the error's kind, in the command line's
// terms; "" for PreflightAuth, where the key goes being the caller's to
// say.
func (e *PreflightError) Hint() string { return preflightHints[e.Kind] }

var preflightHints = map[string]string{
	PreflightDNS:      "check the host name in --url",
	PreflightRefused:  "start the server, or check the host and port in --url",
	PreflightScheme:   "change the scheme of --url as the message says",
	PreflightTLS:      "--ca-cert ca.pem to trust the server's certificate authority, or --insecure",
	PreflightNoAnswer: "check --url; --no-preflight skips this check",
	PreflightNetwork:  "check --url; --no-preflight skips this check",
	PreflightNotFound: "give --url the server's root, e.g. http://127.0.0.1:8000, to which each --api adds its own path",
	PreflightModel:    "--model NAME with a name the server serves; --no-preflight if it serves models it does not list",
}

// Preflight is what the preflight learned about a server that can be
// measured.
type Preflight struct {
	// Models are the served names; nil when the list was not read.
	Models []string
	// Model is the model to ask for: the one given, or the only one the
	// server serves when none was given (then Picked is true).
	Model  string
	Picked bool
	// Note says why the model was not checked ("" when it was).
	Note string
}

// Preflight checks, before any load, that the server answers at the
// target's URL with the right scheme, accepts its credentials and serves
// model: it asks for the model list of api (OpenAI /v1/models, Ollama
// /api/tags). A server without a model list (404, 405, or an answer that
// is not one) is not an error: the model is then not checked, and Note
// says so; but when the URL has a path and the API's endpoint under it
// answers 404 too, nothing is served there and every request would fail.
func (t *Target) Preflight(ctx context.Context, api, model string) (*Preflight, error) {
	ctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	a := apis[api]
	if a == nil {
		a = &openAIChat
	}
	path := a.wire.models
	req, err := t.NewRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return nil, t.unreachable(ctx, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxModelList))
	if err := t.refused(resp, body); err != nil {
		return nil, err
	}
	p := &Preflight{Model: model}
	if resp.StatusCode == http.StatusNotFound && t.prefixed {
		if err := t.probeEndpoint(ctx, a, path); err != nil {
			return nil, err
		}
	}
	if resp.StatusCode != http.StatusOK {
		p.Note = fmt.Sprintf("model not checked: GET %s answered HTTP %d", path, resp.StatusCode) + t.health(ctx, a.wire)
		return p, nil
	}
	if p.Models = modelList(body); p.Models == nil {
		p.Note = fmt.Sprintf("model not checked: GET %s answered without a model list", path)
		return p, nil
	}
	return p, p.check(t, apis[api])
}

// health asks an engine's health endpoint, for a note after its model
// endpoint did not answer: whether the server says it is ready ("" for
// wires without one, or when it does not answer).
func (t *Target) health(ctx context.Context, w *wire) string {
	if w.health == "" {
		return ""
	}
	req, err := t.NewRequest(ctx, http.MethodGet, w.health, nil)
	if err != nil {
		return ""
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	s := fmt.Sprintf("; GET %s answered HTTP %d", w.health, resp.StatusCode)
	if resp.StatusCode != http.StatusOK {
		if words := clip(t.red.Bytes([]byte(errorMessage(body))), 200); words != "" {
			s += ": " + words
		}
	}
	return s
}

// probeEndpoint asks a's endpoint, after the model list at models answered
// 404, whether it is served: a 404 there too means every request would
// fail, and the URL's path is the likely fault. The probe's body, {},
// names no model and no prompt, so no server generates anything for it;
// only the status is read.
func (t *Target) probeEndpoint(ctx context.Context, a *api, models string) error {
	req, err := t.NewRequest(ctx, http.MethodPost, a.path, strings.NewReader("{}"))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.hc.Do(req)
	if err != nil {
		return t.unreachable(ctx, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		return nil
	}
	return &PreflightError{Kind: PreflightNotFound,
		Msg: fmt.Sprintf("nothing is served at %s: GET %s and POST %s answered HTTP 404", t.where(), t.URL(models), t.URL(a.path))}
}

// check finds the model among those served, or picks the only one.
func (p *Preflight) check(t *Target, a *api) error {
	served := strings.Join(p.Models, ", ")
	switch {
	case p.Model == "" && len(p.Models) == 1:
		p.Model, p.Picked = p.Models[0], true
	case p.Model == "" && a != nil && a.needsModel:
		return &PreflightError{Kind: PreflightModel, Models: p.Models,
			Msg: fmt.Sprintf("no model given, and %s serves several: %s", t.theServer(), served)}
	case p.Model != "" && !slices.ContainsFunc(p.Models, func(m string) bool { return sameModel(m, p.Model) }):
		if served == "" {
			served = "none"
		}
		return &PreflightError{Kind: PreflightModel, Models: p.Models,
			Msg: fmt.Sprintf("%s does not serve model %q; it serves: %s", t.theServer(), p.Model, t.Redact(served))}
	}
	return nil
}

// sameModel compares names as Ollama does: "llama3" is "llama3:latest".
func sameModel(served, asked string) bool {
	return served == asked || served == asked+":latest" || served+":latest" == asked
}

// modelList reads the names of an OpenAI list ({"data": [{"id"}]}), an
// Ollama one ({"models": [{"name"}]}), TGI's /info ({"model_id"}) or
// SGLang's /get_model_info ({"served_model_name"} where the server says
// it, else {"model_path"}); nil when body is none of them.
func modelList(body []byte) []string {
	var v struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
		ModelID         string `json:"model_id"`
		ModelPath       string `json:"model_path"`
		ServedModelName string `json:"served_model_name"`
	}
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	if v.Data == nil && v.Models == nil {
		return engineModel(v.ModelID, v.ServedModelName, v.ModelPath)
	}
	names := []string{}
	for _, d := range v.Data {
		names = append(names, d.ID)
	}
	for _, m := range v.Models {
		names = append(names, cmp.Or(m.Name, m.Model))
	}
	return names
}

// engineModel lists the one model an engine serves, under the first of
// its names given (nil when it names none): TGI's model_id, or SGLang's
// served name, else its path.
func engineModel(names ...string) []string {
	if n := cmp.Or(names...); n != "" {
		return []string{n}
	}
	return nil
}

// refused turns an answer that stops the run into its error: credentials
// refused, or plain HTTP sent to an https port.
func (t *Target) refused(resp *http.Response, body []byte) error {
	words := clip(t.red.Bytes([]byte(errorMessage(body))), 200)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		what := "refused the credentials"
		if t.header.Get("Authorization") == "" {
			what = "wants credentials, and none were given"
		}
		return &PreflightError{Kind: PreflightAuth,
			Msg: fmt.Sprintf("%s %s (HTTP %d): %s", t.theServer(), what, resp.StatusCode, cmp.Or(words, http.StatusText(resp.StatusCode)))}
	case resp.StatusCode == http.StatusBadRequest && strings.Contains(string(body), "HTTP request to an HTTPS server"):
		return &PreflightError{Kind: PreflightScheme,
			Msg: fmt.Sprintf("%s speaks https, not plain HTTP: use https:// in the URL (it said: %s)", t.theServer(), words)}
	}
	return nil
}

// tlsAlert starts a TLS alert record, which an http.Client reads as a
// malformed answer.
const tlsAlert = `malformed HTTP response "\x15\x03`

// tlsProbeTimeout bounds the TLS handshake plainToTLS tries.
const tlsProbeTimeout = 3 * time.Second

// plainToTLS reports whether err is how a TLS port refuses plain HTTP:
// servers on OpenSSL (Python's, uvicorn) reset the connection, close it or
// send a TLS alert, where Go's answer with an HTTP 400 (see refused). A
// reset or close has other causes, so the port must also complete a TLS
// handshake.
func (t *Target) plainToTLS(ctx context.Context, err error) bool {
	u, perr := url.Parse(t.base)
	if perr != nil || u.Scheme != "http" {
		return false
	}
	if strings.Contains(err.Error(), tlsAlert) {
		return true
	}
	if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, tlsProbeTimeout)
	defer cancel()
	// Whether it speaks TLS, not whether it is trusted: the certificate
	// is checked when the URL says https.
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, ServerName: u.Hostname()}} //nolint:gosec // no request is sent
	c, derr := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), cmp.Or(u.Port(), "80")))
	if derr != nil {
		return false
	}
	c.Close()
	return true
}

// tlsRefusal names how a TLS port refused plain HTTP.
func tlsRefusal(err error) string {
	switch {
	case strings.Contains(err.Error(), tlsAlert):
		return "a TLS alert"
	case errors.Is(err, syscall.ECONNRESET):
		return "a reset connection"
	}
	return "a closed connection"
}

// unreachable says why a request got no answer, in the user's terms.
func (t *Target) unreachable(ctx context.Context, err error) error {
	var dns *net.DNSError
	var rh tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	msg := t.red.String(err.Error())
	switch {
	case errors.As(err, &dns):
		return &PreflightError{Kind: PreflightDNS, Msg: fmt.Sprintf("cannot resolve host %q: %s", dns.Name, dns.Err)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &PreflightError{Kind: PreflightRefused, Msg: fmt.Sprintf("no server answers at %s (connection refused)", t.where())}
	case errors.As(err, &rh), strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return &PreflightError{Kind: PreflightScheme,
			Msg: fmt.Sprintf("%s speaks plain HTTP, not https: use http:// in the URL", t.theServer())}
	case t.plainToTLS(ctx, err):
		return &PreflightError{Kind: PreflightScheme,
			Msg: fmt.Sprintf("%s answered plain HTTP with %s, and its port speaks TLS: use https:// in the URL", t.theServer(), tlsRefusal(err))}
	case errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &verify):
		return &PreflightError{Kind: PreflightTLS, Msg: fmt.Sprintf("the TLS certificate of %s is not trusted: %s", t.where(), msg)}
	case errors.Is(ctx.Err(), context.Canceled):
		return ctx.Err()
	case ctx.Err() != nil:
		return &PreflightError{Kind: PreflightNoAnswer,
			Msg: fmt.Sprintf("no answer from %s within %v", t.where(), PreflightTimeout)}
	}
	return &PreflightError{Kind: PreflightNetwork, Msg: fmt.Sprintf("cannot reach %s: %s", t.where(), msg)}
}
