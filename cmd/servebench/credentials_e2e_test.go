package main

// End-to-end test that credentials, however given, reach no file and no
// output: the API key, --header values and user:password in --url.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// targetEcho is a server that echoes every credential it is sent back in
// its answers: each header and the user:password of a Basic
// Authorization, in 400 JSON and 500 text errors on completions, a 500 on
// /tokenize, and its /version. With authFail it answers the model list
// with a 401 that echoes them too.
type targetEcho struct {
	authFail bool
	n        atomic.Int64
}

func targetEchoed(r *http.Request) string {
	var parts []string
	for name, vs := range r.Header {
		parts = append(parts, name+": "+strings.Join(vs, ","))
	}
	if user, pass, ok := r.BasicAuth(); ok {
		parts = append(parts, "userinfo "+user+":"+pass, "password "+pass)
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

func (s *targetEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	echo := targetEchoed(r)
	quoted, _ := json.Marshal(echo)
	switch {
	case r.URL.Path == "/v1/models" && s.authFail:
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":%s}}`, quoted)
	case r.URL.Path == "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m"}]}`)
	case r.URL.Path == "/version":
		fmt.Fprintf(w, `{"version":%s}`, quoted)
	case r.URL.Path == "/tokenize":
		http.Error(w, "tokenizer broken for "+echo, http.StatusInternalServerError)
	case s.n.Add(1)%2 == 1:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%s}}`, quoted)
	default:
		http.Error(w, "internal error serving "+echo, http.StatusInternalServerError)
	}
}

// TestTargetCredentialsRedacted: every credential — the API key from the
// environment, an Authorization header, other credential headers, URL
// user:password and its base64 Basic form — stays out of every file,
// stdout and stderr, although the server echoes them all back.
func TestTargetCredentialsRedacted(t *testing.T) {
	const (
		envKey    = "sk-envkey-1234567890"
		bearer    = "hdr-bearer-abcdef"
		apiKey    = "xkey-0987654321"
		cookie    = "cookie-secret-777"
		proxyAuth = "proxy-secret-555"
		user      = "bench-user"
		pass      = "url-pass-424242"
	)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secrets := []string{envKey, bearer, apiKey, cookie, proxyAuth, pass, user + ":" + pass,
		b64(user + ":" + pass), b64(envKey), b64(bearer), b64(apiKey), b64(pass)}
	withUser := func(url string) string { return strings.Replace(url, "://", "://"+user+":"+pass+"@", 1) }
	echo := &targetEcho{}
	url := targetStart(t, echo)
	refusing := targetStart(t, &targetEcho{authFail: true})
	creds := []string{"--header", "X-Api-Key: " + apiKey, "--header", "Cookie: sid=" + cookie,
		"--header", "Proxy-Authorization: Bearer " + proxyAuth}
	tests := []struct {
		name string
		env  string // SERVEBENCH_API_KEY
		url  string
		args []string
	}{
		// The key wins over the header and the URL's credentials.
		{"key from the environment", envKey, withUser(url), append([]string{"--header", "Authorization: Bearer " + bearer}, creds...)},
		{"authorization header", "", withUser(url), append([]string{"--header", "Authorization: Bearer " + bearer}, creds...)},
		// URL credentials are sent as Basic auth, base64.
		{"url user:password", "", withUser(url), creds},
		// /tokenize's error is printed when the server's tokenizer is required.
		{"tokenizer error", "", withUser(url), append([]string{"--tokenizer", "server"}, creds...)},
		{"preflight 401", "", withUser(refusing), creds},
	}
	for _, tt := range tests {
		dir := filepath.Join(t.TempDir(), "run")
		args := append(targetArgs(tt.url, dir, "--model", "m", "--requests", "4"), tt.args...)
		if !slices.Contains(tt.args, "--tokenizer") {
			args = append(args, "--tokenizer", "auto")
		}
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "SERVEBENCH_API_KEY="+tt.env)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		outputs := map[string]string{"stdout": stdout.String(), "stderr": stderr.String()}
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			outputs[f.Name()] = string(b)
		}
		for name, text := range outputs {
			for _, sec := range secrets {
				if strings.Contains(text, sec) {
					t.Errorf("%s: %s contains the credential %q:\n%s", tt.name, name, sec, text)
				}
			}
		}
		// The echo reached the outputs, redacted: the test would see a leak.
		all := strings.Join(slices.Collect(maps.Values(outputs)), "\n")
		if !strings.Contains(all, "[redacted]") {
			t.Errorf("%s: nothing redacted anywhere; outputs:\n%s", tt.name, all)
		}
	}
	if echo.n.Load() == 0 {
		t.Error("no completion request reached the echoing server")
	}
}
