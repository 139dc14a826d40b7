package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// Bounds of Describe: a server that answers nothing costs at most
// DescribeTimeout, and no self-description is large.
const (
	DescribeTimeout = 5 * time.Second
	describeGET     = 2 * time.Second
	describeMaxBody = 1 << 20
)

// TimeScaleHeader is the response header with which a simulated server
// (servebench sim) announces that it runs that many times faster than the
// time it models; measurements against it are converted to model time.
const TimeScaleHeader = "Servebench-Time-Scale"

// Describe asks a server what it is with a handful of short GETs —
// /v1/models, /version (vLLM), /info (TGI), /props (llama.cpp),
// /api/version and, for Ollama, POST /api/show — and returns what the
// answers say, under record's Server* keys. Endpoints that fail or do not exist
// are skipped; the whole probe is bounded by DescribeTimeout. Values lose
// the target's credentials, should a server echo them.
func Describe(ctx context.Context, t *Target, model string) map[record.ServerKey]string {
	ctx, cancel := context.WithTimeout(ctx, DescribeTimeout)
	defer cancel()
	p := &prober{t: t, answers: map[string]map[string]any{}}
	var wg sync.WaitGroup
	for _, path := range []string{"/v1/models", "/version", "/info", "/props", "/api/version"} {
		wg.Go(func() { p.get(ctx, path, nil) })
	}
	wg.Wait()
	if p.answers["/api/version"] != nil && model != "" {
		p.get(ctx, "/api/show", map[string]any{"model": model})
	}
	return p.describe(model)
}

// prober collects the JSON answers of the endpoints that answered.
type prober struct {
	t       *Target
	mu      sync.Mutex
	answers map[string]map[string]any
	// timeScale is the TimeScaleHeader any answer carried.
	timeScale string
}

// get fetches one endpoint (POST with body when body is not nil) and keeps
// its JSON object if it answered 200 with one.
func (p *prober) get(ctx context.Context, path string, body any) {
	ctx, cancel := context.WithTimeout(ctx, describeGET)
	defer cancel()
	method, rd := http.MethodGet, io.Reader(nil)
	if body != nil {
		b, _ := json.Marshal(body)
		method, rd = http.MethodPost, bytes.NewReader(b)
	}
	req, err := p.t.NewRequest(ctx, method, path, rd)
	if err != nil {
		return
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.t.Client().Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if ts := resp.Header.Get(TimeScaleHeader); ts != "" {
		p.mu.Lock()
		p.timeScale = ts
		p.mu.Unlock()
	}
	var obj map[string]any
	dec := json.NewDecoder(io.LimitReader(resp.Body, describeMaxBody))
	if resp.StatusCode != http.StatusOK || dec.Decode(&obj) != nil {
		return
	}
	p.mu.Lock()
	p.answers[path] = obj
	p.mu.Unlock()
}

// describe turns the answers into the flat map.
func (p *prober) describe(model string) map[record.ServerKey]string {
	out := map[record.ServerKey]string{}
	set := func(k record.ServerKey, v any) {
		if s := p.t.Redact(scalarString(v)); s != "" && out[k] == "" {
			out[k] = s
		}
	}
	a := p.answers
	owner := describeModels(a["/v1/models"], model, set)
	describeTGI(a["/info"], set)
	describeLlamaCPP(a["/props"], set)
	describeOllama(a["/api/show"], a["/api/version"], set)
	if v := a["/version"]; v != nil {
		set(record.ServerRuntimeVersion, v["version"])
		if owner == "" || owner == "vllm" {
			set(record.ServerRuntime, "vllm")
		}
	}
	set(record.ServerRuntime, owner)
	var eps []string
	for path := range a {
		eps = append(eps, path)
	}
	sort.Strings(eps)
	set(record.ServerEndpoints, strings.Join(eps, ","))
	if v, err := strconv.ParseFloat(p.timeScale, 64); err == nil && v > 0 && v < 1e9 {
		set(record.ServerTimeScale, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return out
}

// describeModels reads /v1/models: the entry for model (or the only one).
func describeModels(m map[string]any, model string, set func(record.ServerKey, any)) (owner string) {
	data, _ := m["data"].([]any)
	var entry map[string]any
	for _, d := range data {
		e, _ := d.(map[string]any)
		if e != nil && (entry == nil || e["id"] == model) {
			entry = e
		}
	}
	if entry == nil {
		return ""
	}
	set(record.ServerModelID, entry["id"])
	set(record.ServerModelRoot, entry["root"])
	set(record.ServerMaxModelLen, entry["max_model_len"])
	owner = scalarString(entry["owned_by"])
	switch owner {
	case "library", "ollama":
		owner = "ollama"
	case "llamacpp":
		owner = "llama.cpp"
	}
	return owner
}

// describeTGI reads Text Generation Inference's /info.
func describeTGI(m map[string]any, set func(record.ServerKey, any)) {
	if m == nil || m["model_id"] == nil {
		return
	}
	set(record.ServerRuntime, "tgi")
	set(record.ServerRuntimeVersion, m["version"])
	set(record.ServerModelID, m["model_id"])
	set(record.ServerModelRevision, m["model_sha"])
	set(record.ServerQuantization, m["model_dtype"])
	set(record.ServerMaxModelLen, m["max_total_tokens"])
}

// describeLlamaCPP reads llama.cpp server's /props.
func describeLlamaCPP(m map[string]any, set func(record.ServerKey, any)) {
	gen, _ := m["default_generation_settings"].(map[string]any)
	if gen == nil {
		return
	}
	set(record.ServerRuntime, "llama.cpp")
	set(record.ServerRuntimeVersion, m["build_info"])
	set(record.ServerModelRoot, m["model_path"])
	set(record.ServerMaxModelLen, gen["n_ctx"])
	set(record.ServerMaxModelLen, m["n_ctx"])
	set(record.ServerSlots, m["total_slots"])
	params, _ := gen["params"].(map[string]any)
	for _, k := range []string{"temperature", "top_p", "top_k", "min_p", "repeat_penalty"} {
		set(record.Sampling(k), params[k])
	}
}

// describeOllama reads Ollama's /api/show and /api/version.
func describeOllama(show, version map[string]any, set func(record.ServerKey, any)) {
	if version == nil || show == nil {
		return
	}
	set(record.ServerRuntime, "ollama")
	set(record.ServerRuntimeVersion, version["version"])
	if d, _ := show["details"].(map[string]any); d != nil {
		set(record.ServerQuantization, d["quantization_level"])
	}
	if info, _ := show["model_info"].(map[string]any); info != nil {
		for k, v := range info {
			if strings.HasSuffix(k, ".context_length") {
				set(record.ServerModelContext, v)
			}
		}
	}
	// Parameters are "name value" lines; num_ctx is the context used.
	params, _ := show["parameters"].(string)
	for _, line := range strings.Split(params, "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch name {
		case "num_ctx":
			set(record.ServerMaxModelLen, value)
		case "temperature", "top_p", "top_k", "min_p", "repeat_penalty":
			set(record.Sampling(name), value)
		}
	}
}

// scalarString formats a JSON scalar; objects, lists and nulls give "".
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}
