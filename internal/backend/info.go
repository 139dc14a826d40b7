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
)

// Bounds of Describe: a server that answers nothing costs at most
// DescribeTimeout, and no self-description is large.
const (
	DescribeTimeout = 5 * time.Second
	describeGET     = 2 * time.Second
	describeMaxBody = 1 << 20
)

// Keys of the map Describe returns (recorded as run.json target.server).
const (
	InfoRuntime        = "runtime"         // vllm, sglang, tgi, llama.cpp, ollama, or what /v1/models says owns the model
	InfoRuntimeVersion = "runtime_version" // the server's version or build
	InfoModelID        = "model_id"        // the served model's id
	InfoModelRoot      = "model_root"      // what it was loaded from (vLLM root, llama.cpp model path)
	InfoModelRevision  = "model_revision"  // a commit or digest, where the server says
	InfoQuantization   = "quantization"    // quantization or dtype, where the server says
	InfoMaxModelLen    = "max_model_len"   // context length in tokens
	InfoSlots          = "total_slots"     // sequences served at once (llama.cpp /props)
	InfoEndpoints      = "endpoints"       // which of the probed endpoints answered
	// InfoTimeScale is how many times faster than model time the server
	// runs, from its TimeScaleHeader (servebench sim).
	InfoTimeScale = "time_scale"
	// InfoSamplingPrefix prefixes the server's default sampling settings
	// ("sampling.temperature").
	InfoSamplingPrefix = "sampling."
	// InfoSimSettings is the built-in simulator's configuration, as a JSON
	// object of "section.field" keys (sim.Config.Settings): what makes
	// one simulated server another.
	InfoSimSettings = "sim_settings"
)

// TimeScaleHeader is the response header with which a simulated server
// (servebench sim) announces that it runs that many times faster than the
// time it models; measurements against it are converted to model time.
const TimeScaleHeader = "Servebench-Time-Scale"

// Describe asks a server what it is with a handful of short GETs —
// /v1/models, /version (vLLM), /info (TGI), /props (llama.cpp),
// /api/version and, for Ollama, POST /api/show — and returns what the
// answers say, under the Info* keys. Endpoints that fail or do not exist
// are skipped; the whole probe is bounded by DescribeTimeout. Values lose
// the target's credentials, should a server echo them.
func Describe(ctx context.Context, t *Target, model string) map[string]string {
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
func (p *prober) describe(model string) map[string]string {
	out := map[string]string{}
	set := func(k string, v any) {
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
		set(InfoRuntimeVersion, v["version"])
		if owner == "" || owner == "vllm" {
			set(InfoRuntime, "vllm")
		}
	}
	set(InfoRuntime, owner)
	var eps []string
	for path := range a {
		eps = append(eps, path)
	}
	sort.Strings(eps)
	set(InfoEndpoints, strings.Join(eps, ","))
	if v, err := strconv.ParseFloat(p.timeScale, 64); err == nil && v > 0 && v < 1e9 {
		set(InfoTimeScale, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return out
}

// describeModels reads /v1/models: the entry for model (or the only one).
func describeModels(m map[string]any, model string, set func(string, any)) (owner string) {
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
	set(InfoModelID, entry["id"])
	set(InfoModelRoot, entry["root"])
	set(InfoMaxModelLen, entry["max_model_len"])
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
func describeTGI(m map[string]any, set func(string, any)) {
	if m == nil || m["model_id"] == nil {
		return
	}
	set(InfoRuntime, "tgi")
	set(InfoRuntimeVersion, m["version"])
	set(InfoModelID, m["model_id"])
	set(InfoModelRevision, m["model_sha"])
	set(InfoQuantization, m["model_dtype"])
	set(InfoMaxModelLen, m["max_total_tokens"])
}

// describeLlamaCPP reads llama.cpp server's /props.
func describeLlamaCPP(m map[string]any, set func(string, any)) {
	gen, _ := m["default_generation_settings"].(map[string]any)
	if gen == nil {
		return
	}
	set(InfoRuntime, "llama.cpp")
	set(InfoRuntimeVersion, m["build_info"])
	set(InfoModelRoot, m["model_path"])
	set(InfoMaxModelLen, gen["n_ctx"])
	set(InfoMaxModelLen, m["n_ctx"])
	set(InfoSlots, m["total_slots"])
	params, _ := gen["params"].(map[string]any)
	for _, k := range []string{"temperature", "top_p", "top_k", "min_p", "repeat_penalty"} {
		set(InfoSamplingPrefix+k, params[k])
	}
}

// describeOllama reads Ollama's /api/show and /api/version.
func describeOllama(show, version map[string]any, set func(string, any)) {
	if version == nil || show == nil {
		return
	}
	set(InfoRuntime, "ollama")
	set(InfoRuntimeVersion, version["version"])
	if d, _ := show["details"].(map[string]any); d != nil {
		set(InfoQuantization, d["quantization_level"])
	}
	if info, _ := show["model_info"].(map[string]any); info != nil {
		for k, v := range info {
			if strings.HasSuffix(k, ".context_length") {
				set("model_context_length", v)
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
			set(InfoMaxModelLen, value)
		case "temperature", "top_p", "top_k", "min_p", "repeat_penalty":
			set(InfoSamplingPrefix+name, value)
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
