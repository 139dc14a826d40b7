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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
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

// leakyServer is the worst server for credentials: it echoes every
// header it is sent in its errors, in clear and base64-encoded at each of
// the three alignments (standard and URL alphabets), counts requests per
// API key in a series servebench does not map, and serves that page to
// anyone, whatever path and credentials it is scraped with.
type leakyServer struct {
	mu   sync.Mutex
	keys map[string]int
	n    atomic.Int64
}

func (s *leakyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	echo := targetEchoed(r)
	enc := []string{echo}
	for i, e := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
		for pad := range 3 {
			enc = append(enc, fmt.Sprintf("b64-%d-%d=%s", i, pad, e.EncodeToString([]byte(strings.Repeat("x", pad)+echo))))
		}
	}
	quoted, _ := json.Marshal(strings.Join(enc, " "))
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m"}]}`)
	case "/version":
		fmt.Fprintf(w, `{"version":%s}`, quoted)
	case "/metrics", "/dcgm/metrics", "/node/metrics":
		s.mu.Lock()
		defer s.mu.Unlock()
		fmt.Fprintf(w, "leaky_scrapes{auth=%q} 1\n", r.Header.Get("Authorization"))
		for k, n := range s.keys {
			fmt.Fprintf(w, "leaky_requests_total{key=%q} %d\n", k, n)
		}
	default:
		s.mu.Lock()
		s.keys[r.Header.Get("Authorization")+" "+r.Header.Get("X-Api-Key")]++
		s.mu.Unlock()
		time.Sleep(60 * time.Millisecond) // time for telemetry to scrape
		if s.n.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":%s}}`, quoted)
			return
		}
		http.Error(w, "internal error serving "+strings.Join(enc, " "), http.StatusInternalServerError)
	}
}

// leaks says where text gives a secret away: in clear, or in base64 (either
// alphabet, any alignment) that decodes to the secret's middle.
func leaks(text, secret string) string {
	if strings.Contains(text, secret) {
		return "in clear"
	}
	mid := secret[2 : len(secret)-2]
	for _, run := range regexp.MustCompile(`[A-Za-z0-9+/_-]{8,}`).FindAllString(text, -1) {
		std := strings.NewReplacer("-", "+", "_", "/").Replace(run)
		for start := range 4 {
			chunk := std[start:]
			dec, _ := base64.RawStdEncoding.DecodeString(chunk[:len(chunk)/4*4])
			if strings.Contains(string(dec), mid) {
				return "base64-encoded in " + run
			}
		}
	}
	return ""
}

// TestNoSecretInAnyOutput sends credentials every way servebench takes
// them (the API key in the environment, credential headers, user:password
// in --url and in each telemetry URL) to a server that echoes them in
// clear and in base64 at every alignment and labels a metric with them,
// and finds none in any output: the terminal, every file of the run
// directory, the history database, history --json and show, compare,
// report --format html, the kube job manifest, and a malformed --header's
// error.
func TestNoSecretInAnyOutput(t *testing.T) {
	const (
		envKey   = "sk-envkey-1234567890"
		bearer   = "hdr-bearer-abcdef"
		apiKey   = "xkey-0987654321"
		cookie   = "cookie-secret-777"
		pass     = "url-pass-424242"
		metPass  = "metrics-pass-31337"
		gpuPass  = "gpu-pass-27182"
		hostPass = "host-pass-16180"
		badHdr   = "malformed-secret-8080"
	)
	secrets := []string{envKey, bearer, apiKey, cookie, pass, metPass, gpuPass, hostPass, badHdr}
	srv := &leakyServer{keys: map[string]int{}}
	base := targetStart(t, srv)
	withUser := func(user, pass, path string) string {
		return strings.Replace(base, "://", "://"+user+":"+pass+"@", 1) + path
	}
	data := t.TempDir()
	environ := []string{"SERVEBENCH_API_KEY=" + envKey, "XDG_DATA_HOME=" + data}
	outputs := map[string]string{}
	sb := func(name string, args ...string) (int, string) {
		t.Helper()
		code, stdout, stderr := runEnv(t, environ, args...)
		outputs[name+": stdout"], outputs[name+": stderr"] = stdout, stderr
		return code, stdout
	}
	runFlags := []string{"--url", withUser("bench-user", pass, ""), "--api", "openai-completions", "--model", "m",
		"--concurrency", "1", "--requests", "6", "--prompt-tokens", "8", "--output-tokens", "3", "--tokenizer", "cl100k_base",
		"--header", "Authorization: Bearer " + bearer, "--header", "X-Api-Key: " + apiKey, "--header", "Cookie: sid=" + cookie,
		"--metrics-url", withUser("met-user", metPass, "/metrics"), "--gpu-metrics-url", withUser("gpu-user", gpuPass, "/dcgm/metrics"),
		"--host-metrics-url=" + withUser("host-user", hostPass, "/node/metrics"), "--sample-interval", "20ms"}
	dir := filepath.Join(t.TempDir(), "run")
	sb("run", append(append([]string{"run"}, runFlags...), "--out", dir)...)
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		outputs[f.Name()] = string(b)
	}
	for _, want := range []string{"report.html", "run.json", "summary.json", "records.jsonl", "telemetry.jsonl"} {
		if _, ok := outputs[want]; !ok {
			t.Errorf("the run wrote no %s: the test would not see it leak", want)
		}
	}
	// The server's per-key series reached telemetry.jsonl, redacted.
	if !strings.Contains(outputs["telemetry.jsonl"], `leaky_requests_total{key=\"[redacted]`) {
		t.Errorf("no redacted per-key series in telemetry.jsonl:\n%s", outputs["telemetry.jsonl"])
	}
	_, list := sb("history --json", "history", "--json")
	var runs []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(list), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("history --json: %v, %d runs\n%s", err, len(runs), list)
	}
	sb("history show", "history", "show", strconv.FormatInt(runs[0].ID, 10))
	sb("history show --json", "history", "show", strconv.FormatInt(runs[0].ID, 10), "--json")
	sb("compare", "compare", dir, dir)
	sb("report --format html", "report", "--format", "html", dir)
	dbFiles, _ := filepath.Glob(filepath.Join(data, "servebench", "*"))
	for _, f := range dbFiles {
		b, _ := os.ReadFile(f)
		outputs[f] = string(b)
	}
	if len(dbFiles) == 0 {
		t.Errorf("no history database in %s", data)
	}
	// kube job: without --api-key-secret the key in the environment is an
	// error; with it, the Job holds none of the credentials (the Secret
	// printed before it holds the others, for the workers).
	kube := append(append([]string{"kube", "job"}, runFlags...), "--workers", "2", "--image", "i", "--claim", "c")
	if code, _ := sb("kube job without --api-key-secret", kube...); code != 2 {
		t.Errorf("kube job with a key in the environment and no --api-key-secret: exit %d, want 2", code)
	}
	code, manifest := sb("kube job", append(kube, "--api-key-secret", "llm-key")...)
	docs := strings.Split(manifest, "\n---\n")
	if code != 0 || len(docs) != 2 || !strings.Contains(docs[1], "kind: Job") {
		t.Fatalf("kube job: exit %d, want a Secret and a Job:\n%s", code, manifest)
	}
	outputs["kube job: stdout"] = docs[1]
	for _, s := range []string{bearer, apiKey, cookie, pass, metPass, gpuPass, hostPass} {
		if !strings.Contains(docs[0], s) {
			t.Errorf("the Secret printed before the Job lacks %q:\n%s", s, docs[0])
		}
	}
	if code, _ := sb("malformed header", "run", "--header", "Authorization Bearer "+badHdr); code != 2 {
		t.Errorf("a malformed --header: exit %d, want 2", code)
	}
	if !strings.Contains(outputs["malformed header: stderr"], "--header") {
		t.Errorf("a malformed --header's error does not name the flag: %q", outputs["malformed header: stderr"])
	}
	for name, text := range outputs {
		for _, s := range secrets {
			if how := leaks(text, s); how != "" {
				t.Errorf("%s gives %q away %s", name, s, how)
			}
		}
	}
}

// TestKubeJobWorkersGetTheirCredentials: a worker of a Job whose flags
// carry credentials, started as the kubelet starts it (variables from the
// Secret printed before the Job, $(VAR) expanded in its arguments), sends
// each credential where the flags said: a server that answers only with
// them sees every request succeed and its metrics scraped, and the
// worker's run directory holds none of them.
func TestKubeJobWorkersGetTheirCredentials(t *testing.T) {
	const (
		pass    = "url-pass-424242"
		apiKey  = "xkey-0987654321"
		metPass = "metrics-pass-31337"
	)
	srv := targetStart(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, got, _ := r.BasicAuth()
		switch {
		case r.URL.Path == "/metrics" && user == "met" && got == metPass:
			fmt.Fprint(w, "vllm:num_requests_running 1\n")
		case r.URL.Path == "/metrics":
			http.Error(w, "no", http.StatusUnauthorized)
		case user != "bench" || got != pass || r.Header.Get("X-Api-Key") != apiKey:
			http.Error(w, "no", http.StatusUnauthorized)
		default:
			shardServe(w, r)
		}
	}))
	withUser := func(user, pass, path string) string {
		return strings.Replace(srv, "://", "://"+user+":"+pass+"@", 1) + path
	}
	code, manifest, stderr := runEnv(t, []string{"SERVEBENCH_API_KEY="}, "kube", "job", "--url", withUser("bench", pass, ""),
		"--header", "X-Api-Key: "+apiKey, "--metrics-url", withUser("met", metPass, "/metrics"), "--sample-interval", "20ms",
		"--api", "openai-completions", "--model", "m", "--prompt-tokens", "8", "--output-tokens", strconv.Itoa(shardTokens),
		"--tokenizer", "cl100k_base", "--concurrency", "2", "--requests", "6",
		"--workers", "1", "--image", "i", "--claim", "c", "--name", "creds", "--start-in", "1s")
	docs := strings.Split(manifest, "\n---\n")
	if code != 0 || len(docs) != 2 {
		t.Fatalf("kube job: exit %d, want a Secret and a Job\n%s%s", code, manifest, stderr)
	}
	var secret corev1.Secret
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &secret); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &job); err != nil {
		t.Fatal(err)
	}
	// The kubelet: each variable from its source, then $(VAR) expanded.
	c := job.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom.FieldRef != nil:
			env[e.Name] = "0"
		case e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == secret.Name:
			env[e.Name] = secret.StringData[e.ValueFrom.SecretKeyRef.Key]
		default:
			t.Fatalf("env %s: a source the Job should not need: %+v", e.Name, e.ValueFrom)
		}
	}
	ref := regexp.MustCompile(`\$\(([A-Z_0-9]+)\)`)
	results := t.TempDir() // the volume mounted at /results
	var args []string
	for _, a := range c.Args {
		a = ref.ReplaceAllStringFunc(a, func(m string) string { return env[m[2:len(m)-1]] })
		args = append(args, strings.Replace(a, "--out=/results/", "--out="+results+"/", 1))
	}
	code, stdout, stderr := runEnv(t, []string{"SERVEBENCH_API_KEY="}, args...)
	if code != 0 {
		t.Fatalf("the worker: exit %d\n%s%s", code, stdout, stderr)
	}
	dir := filepath.Join(results, "creds", "worker-0")
	recs := targetRecords(t, dir)
	for _, r := range recs {
		if r["error"] != nil {
			t.Errorf("a request failed: the worker lacks a credential: %v", r["error"])
		}
	}
	if len(recs) == 0 {
		t.Error("the worker recorded no request")
	}
	outputs := map[string]string{"stdout": stdout, "stderr": stderr}
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(dir, f.Name()))
		outputs[f.Name()] = string(b)
	}
	// A refused scrape says HTTP 401; a scrape a busy machine timed out is
	// no sign of a missing credential.
	if tel := outputs["telemetry.jsonl"]; !strings.Contains(tel, `"running":1`) || strings.Contains(tel, "HTTP 401") {
		t.Errorf("the worker's metrics were not scraped with their credentials:\n%s", tel)
	}
	for name, text := range outputs {
		for _, s := range []string{pass, apiKey, metPass} {
			if how := leaks(text, s); how != "" {
				t.Errorf("the worker's %s gives %q away %s", name, s, how)
			}
		}
	}
}
