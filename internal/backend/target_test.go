package backend

import (
	"encoding/base64"
	"github.com/servebench/servebench/internal/record"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestNewTarget(t *testing.T) {
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name string
		o    TargetOptions
		base string // "" when NewTarget must fail
		auth string // the Authorization header requests carry
		host string
	}{
		{"plain", TargetOptions{URL: "http://h:8000"}, "http://h:8000", "", ""},
		// /v1 and trailing slashes name the same server; a prefix is kept.
		{"v1", TargetOptions{URL: "http://h:8000/v1"}, "http://h:8000", "", ""},
		{"v1 slash", TargetOptions{URL: "http://h:8000/v1/"}, "http://h:8000", "", ""},
		{"prefix", TargetOptions{URL: "https://h/proxy/v1/"}, "https://h/proxy", "", ""},
		{"slash", TargetOptions{URL: "http://h:11434/"}, "http://h:11434", "", ""},
		// The API key is a Bearer token and wins over a --header one.
		{"key", TargetOptions{URL: "http://h", APIKey: "sk-1", Header: http.Header{"Authorization": {"Bearer other"}}}, "http://h", "Bearer sk-1", ""},
		{"header", TargetOptions{URL: "http://h", Header: http.Header{"Authorization": {"Bearer other"}, "Host": {"x"}}}, "http://h", "Bearer other", "x"},
		// URL credentials become Basic auth and leave the URL.
		{"userinfo", TargetOptions{URL: "https://u:p%40ss@h/v1"}, "https://h", basic("u:p@ss"), ""},
		{"userinfo and header", TargetOptions{URL: "https://u:pw@h", Header: http.Header{"Authorization": {"Bearer t"}}}, "https://h", "Bearer t", ""},
		{"no scheme", TargetOptions{URL: "h:8000"}, "", "", ""},
		{"ftp", TargetOptions{URL: "ftp://h"}, "", "", ""},
		{"query", TargetOptions{URL: "https://u:secret@h/v1?key=abc"}, "", "", ""},
		{"fragment", TargetOptions{URL: "http://h/#x"}, "", "", ""},
	}
	for _, tt := range tests {
		tg, err := NewTarget(tt.o)
		switch {
		case tt.base == "" && err == nil:
			t.Errorf("%s: NewTarget succeeded with base %q, want an error", tt.name, tg.Base())
		case tt.base == "" && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: error %q shows the password", tt.name, err)
		case tt.base != "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case err == nil:
			if got := tg.Base(); got != tt.base {
				t.Errorf("%s: base %q, want %q", tt.name, got, tt.base)
			}
			h := tg.Header()
			if got := h.Get("Authorization"); got != tt.auth {
				t.Errorf("%s: Authorization %q, want %q", tt.name, got, tt.auth)
			}
			if tg.Host() != tt.host || h.Get("Host") != "" {
				t.Errorf("%s: host %q (header %q), want %q", tt.name, tg.Host(), h.Get("Host"), tt.host)
			}
		}
	}
}

// TestTargetEndpointPath: a URL that names an API's endpoint, as client
// settings often do, is the server root before it, and says which API.
func TestTargetEndpointPath(t *testing.T) {
	tests := []struct{ url, base, api string }{
		{"http://h:8000/v1/chat/completions", "http://h:8000", record.APIOpenAIChat},
		{"http://h:8000/v1/chat/completions/", "http://h:8000", record.APIOpenAIChat},
		{"http://h:8000/v1/completions", "http://h:8000", record.APIOpenAICompletions},
		{"http://h:11434/api/chat", "http://h:11434", record.APIOllamaChat},
		{"http://h:11434/api/generate", "http://h:11434", record.APIOllamaGenerate},
		// The engines' native endpoints; /api/generate stays Ollama's.
		{"http://h:8080/completion", "http://h:8080", record.APILlamaCppCompletion},
		{"http://h:8080/generate_stream", "http://h:8080", record.APITGIGenerate},
		{"http://h:30000/generate", "http://h:30000", record.APISGLangGenerate},
		// A prefix before the endpoint is the root's.
		{"https://u:pw@gw/team/v1/chat/completions", "https://gw/team", record.APIOpenAIChat},
		// Not an endpoint: only /v1 and slashes go.
		{"http://h:8000/v1/models", "http://h:8000/v1/models", ""},
		{"http://h:8000/chat/completions", "http://h:8000/chat/completions", ""},
		{"http://h:8000/v1", "http://h:8000", ""},
	}
	for _, tt := range tests {
		tg := mustTarget(t, TargetOptions{URL: tt.url})
		if tg.Base() != tt.base || tg.PathAPI() != tt.api {
			t.Errorf("%s: base %q API %q, want %q %q", tt.url, tg.Base(), tg.PathAPI(), tt.base, tt.api)
		}
	}
}

// TestTargetRedacts: every credential a target carries, however given, and
// the forms a server may echo it in, leave any text.
func TestTargetRedacts(t *testing.T) {
	const (
		key    = "sk-live-0123456789"
		bearer = "tok-abcdefgh"
		apiKey = "xk-ZYXWVUT"
		cookie = "sess-998877"
		user   = "alice"
		pass   = "p@ss:w0rd/x"
	)
	tg, err := NewTarget(TargetOptions{
		URL: "https://" + user + ":" + url.QueryEscape(pass) + "@h/v1", APIKey: key,
		Header: http.Header{"Proxy-Authorization": {"Bearer " + bearer}, "X-Api-Key": {apiKey},
			"Cookie": {"a=1; sid=" + cookie}, "X-Team": {"infra-team"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secrets := []string{key, bearer, apiKey, cookie, pass, user + ":" + pass, b64(user + ":" + pass),
		b64(key), url.QueryEscape(pass), url.PathEscape(pass), `p@ss:w0rd\/x`}
	for _, s := range secrets {
		text := "echo: <" + s + "> and " + s
		got := tg.Redact(text)
		if strings.Contains(got, s) || !strings.Contains(got, "[redacted]") {
			t.Errorf("Redact(%q) = %q", text, got)
		}
		if got := string(tg.Redactor().Bytes([]byte(text))); strings.Contains(got, s) {
			t.Errorf("Bytes(%q) = %q", text, got)
		}
	}
	// Headers that carry no credential, and short values, are left alone.
	for _, s := range []string{"infra-team", "a=1", "alice"} {
		if got := tg.Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want it unchanged", s, got)
		}
	}
	var none *Redactor
	if got := none.String("x " + key); got != "x "+key {
		t.Errorf("nil redactor changed text: %q", got)
	}
}

// FuzzRedactor: a credential of 4 bytes or more never survives redaction,
// wherever it sits among other text and other credentials.
func FuzzRedactor(f *testing.F) {
	f.Add("sk-abcdef", "other-secret", "error: ", " echoed")
	f.Add("aaaa", "aaaaaa", "aaa", "a")
	f.Add("p@ss/w0rd", "Bearer x", `{"m":"`, `"}`)
	f.Fuzz(func(t *testing.T, secret, other, before, after string) {
		if len(secret) < minSecret || strings.Contains(secret, "\x00") {
			t.Skip()
		}
		r := NewRedactor(other, secret)
		out := r.String(before + secret + after + other + secret)
		// Redaction markers split the text: the secret must not appear in
		// what is left between them.
		if rest := strings.ReplaceAll(out, redacted, "\x00"); strings.Contains(rest, secret) {
			t.Errorf("secret %q survives in %q", secret, out)
		}
	})
}

// TestRedactorBase64AnyAlignment: a server that echoes a credential inside
// base64 text (a Basic header, a JSON field encoded whole) puts it at any
// offset; at each of the three alignments, in both alphabets, with or
// without padding, what encodes the credential's bytes alone is redacted,
// so that decoding what is left does not give the credential back.
func TestRedactorBase64AnyAlignment(t *testing.T) {
	const secret = "sk-live-0123456789?>~" // "?>~" encode to "/" and "+" in the standard alphabet
	r := NewRedactor(secret)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		for before := range 6 {
			for _, after := range []string{"", "x", "xy", `","more":"text`} {
				plain := strings.Repeat("p", before) + secret + after
				echoed := enc.EncodeToString([]byte(plain))
				got := r.String("error: " + echoed)
				if !strings.Contains(got, redacted) {
					t.Errorf("offset %d, after %q: %q not redacted", before, after, got)
					continue
				}
				// Each piece left decodes to no more than two of the
				// credential's bytes at an edge.
				for _, piece := range strings.Split(strings.TrimPrefix(got, "error: "), redacted) {
					dec, _ := enc.DecodeString(piece[:len(piece)/4*4])
					if strings.Contains(string(dec), secret[2:len(secret)-2]) {
						t.Errorf("offset %d, after %q: %q decodes to %q", before, after, piece, dec)
					}
				}
			}
		}
	}
}

func TestLaunchRedactor(t *testing.T) {
	opts := TargetOptions{URL: "http://gpu-host:8000", APIKey: "sk-launch-key",
		Header: http.Header{"X-Api-Key": {"hdr-secret-1"}, "X-Team": {"infra-team"}}}
	env := []string{"HF_TOKEN=hf_abcdef", "PATH=/usr/bin", "MY_PASSWORD=pw-12345", "OLLAMA_NUM_PARALLEL=4", "NOEQUALS"}
	r := NewLaunchRedactor(opts, env)
	for _, c := range []struct{ in, want string }{
		{"token hf_abcdef loaded", "token [redacted] loaded"},                // a credential variable's value
		{"pw-12345", "[redacted]"},                                           // any name that says it holds one
		{"key sk-launch-key", "key [redacted]"},                              // the target's API key, whatever its URL
		{"X-Api-Key: hdr-secret-1", "X-Api-Key: [redacted]"},                 // a credential header
		{"path /usr/bin, team infra-team", "path /usr/bin, team infra-team"}, // not credentials
	} {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
