package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startServer serves a simulator on loopback for one test.
func startServer(t *testing.T, mutate func(*Config)) (*Server, string) {
	t.Helper()
	c := exact()
	c.TimeScale = 50
	if mutate != nil {
		mutate(&c)
	}
	srv, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	url, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if srv.URL() != url {
		t.Fatalf("URL() = %q, Start said %q", srv.URL(), url)
	}
	return srv, url
}

// streamResult is what a client saw of one streamed request.
type streamResult struct {
	tokens     int           // content-bearing chunks (one token each)
	text       string        // their concatenation
	ttft, e2e  time.Duration // from send to first content chunk / to the end
	usage      *usage
	finish     string
	errMessage string
	status     int
}

// streamOpenAI posts a streaming request and reads its SSE events.
func streamOpenAI(t *testing.T, ctx context.Context, url, path, body string) streamResult {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+path, strings.NewReader(body))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := streamResult{status: resp.StatusCode}
	sc := bufio.NewScanner(resp.Body)
	var text strings.Builder
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			break
		}
		var ev struct {
			Choices []struct {
				Text  *string `json:"text"`
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *usage `json:"usage"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad event %q: %v", line, err)
		}
		if ev.Error != nil {
			r.errMessage = ev.Error.Message
		}
		if ev.Usage != nil {
			r.usage = ev.Usage
		}
		for _, c := range ev.Choices {
			content := c.Delta.Content
			if c.Text != nil {
				content = *c.Text
			}
			if content != "" {
				if r.tokens == 0 {
					r.ttft = time.Since(start)
				}
				r.tokens++
				text.WriteString(content)
			}
			if c.FinishReason != nil {
				r.finish = *c.FinishReason
			}
		}
	}
	r.e2e, r.text = time.Since(start), text.String()
	return r
}

// scrape reads /metrics into "name{labels}" → value, and name → TYPE.
func scrape(t *testing.T, url string) (values map[string]float64, types map[string]string) {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	values, types = map[string]float64{}, map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" {
			types[f[2]] = f[3]
		}
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		values[line[:i]] = v
	}
	return values, types
}

// metric sums the samples of name whose labels contain every one of labels.
func metric(values map[string]float64, name string, labels ...string) float64 {
	var sum float64
	for k, v := range values {
		if k != name && !strings.HasPrefix(k, name+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(k, l)
		}
		if ok {
			sum += v
		}
	}
	return sum
}

func chatBody(words, maxTokens int, extra string) string {
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}],"max_tokens":%d,"stream":true%s}`,
		DefaultModelName, strings.TrimSpace(strings.Repeat("word ", words)), maxTokens, extra)
}

func TestMetricsAgreeWithClient(t *testing.T) {
	_, url := startServer(t, nil)
	const n, conc = 12, 4
	results := make([]streamResult, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, conc)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = streamOpenAI(t, context.Background(), url, "/v1/chat/completions",
				chatBody(50+10*i, 20+i, `,"stream_options":{"include_usage":true}`))
		}()
	}
	wg.Wait()
	var streamed, prompt int
	stops := 0
	for i, r := range results {
		if r.usage == nil || r.usage.CompletionTokens != r.tokens || r.tokens < 1 || r.tokens > 20+i {
			t.Fatalf("request %d: streamed %d tokens, usage %+v", i, r.tokens, r.usage)
		}
		if countWords(r.text) != r.tokens {
			t.Errorf("request %d: %d tokens but %d words", i, r.tokens, countWords(r.text))
		}
		// 1 BOS + 5 per message + words + 4 for the assistant header.
		if r.usage.PromptTokens != 1+5+50+10*i+4 {
			t.Errorf("request %d: prompt_tokens %d", i, r.usage.PromptTokens)
		}
		if r.finish == reasonStop {
			stops++
		}
		streamed += r.tokens
		prompt += r.usage.PromptTokens
	}
	v, types := scrape(t, url)
	for name, want := range map[string]float64{
		"vllm:generation_tokens_total":           float64(streamed),
		"vllm:prompt_tokens_total":               float64(prompt),
		"vllm:request_success_total":             n,
		"vllm:time_to_first_token_seconds_count": n,
		"vllm:e2e_request_latency_seconds_count": n,
		"vllm:inter_token_latency_seconds_count": float64(streamed - n),
		"vllm:request_generation_tokens_sum":     float64(streamed),
		"vllm:num_requests_running":              0,
		"vllm:num_requests_waiting":              0,
		"vllm:kv_cache_usage_perc":               0,
		"vllm:num_preemptions_total":             0,
		"vllm:request_queue_time_seconds_count":  n,
	} {
		if got := metric(v, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := metric(v, "vllm:request_success_total", `finished_reason="stop"`); got != float64(stops) {
		t.Errorf("finished_reason=stop: %v, want %d", got, stops)
	}
	for name, typ := range map[string]string{
		"vllm:num_requests_running": "gauge", "vllm:num_requests_waiting": "gauge",
		"vllm:kv_cache_usage_perc": "gauge", "vllm:num_preemptions_total": "counter",
		"vllm:prompt_tokens_total": "counter", "vllm:generation_tokens_total": "counter",
		"vllm:time_to_first_token_seconds": "histogram", "vllm:inter_token_latency_seconds": "histogram",
		"vllm:e2e_request_latency_seconds": "histogram", "vllm:request_queue_time_seconds": "histogram",
		"vllm:request_success_total": "counter", "vllm:cache_config_info": "gauge",
	} {
		if types[name] != typ {
			t.Errorf("%s: TYPE %q, want %q", name, types[name], typ)
		}
	}
	if metric(v, "vllm:time_to_first_token_seconds_bucket", `le="0.001"`) > n ||
		metric(v, "vllm:time_to_first_token_seconds_bucket", `le="2560"`) != n {
		t.Error("TTFT buckets are not vLLM's")
	}
	if metric(v, "vllm:time_to_first_token_seconds_count", `model_name="`+DefaultModelName+`"`) != n {
		t.Error("model_name label missing")
	}
}

func TestClientSeesModelTimeOverScale(t *testing.T) {
	srv, url := startServer(t, func(c *Config) { c.TimeScale = 10 })
	c := srv.Config()
	const words, out = 8000, 100
	r := streamOpenAI(t, context.Background(), url, "/v1/completions",
		fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"ignore_eos":true,"stream":true}`, strings.Repeat("w ", words), out))
	if r.tokens != out || r.finish != reasonLength {
		t.Fatalf("got %d tokens, finish %q", r.tokens, r.finish)
	}
	prompt := bosTokens + words
	wantTTFT := c.Wall(c.PrefillTime(prompt))
	// Loopback and scheduling add a little; a loaded 2-core machine more.
	if r.ttft < wantTTFT*95/100 || r.ttft > wantTTFT*3/2+5*time.Millisecond {
		t.Errorf("client TTFT %v, want ≈ %v (prefill %v / scale 10)", r.ttft, wantTTFT, c.PrefillTime(prompt))
	}
	wantTPOT := c.Wall(c.DecodeStepTime(1, prompt+out/2))
	tpot := (r.e2e - r.ttft) / (out - 1)
	if tpot < wantTPOT*9/10 || tpot > wantTPOT*3/2 {
		t.Errorf("client time per output token %v, want ≈ %v", tpot, wantTPOT)
	}
	// The server's own TTFT (in /metrics) is in the same base, never above the client's.
	v, _ := scrape(t, url)
	if s := metric(v, "vllm:time_to_first_token_seconds_sum"); s > r.ttft.Seconds() || s < wantTTFT.Seconds()*0.99 {
		t.Errorf("server TTFT %v s, client %v, model/scale %v", s, r.ttft, wantTTFT)
	}
}

func TestOllamaTimingsConsistent(t *testing.T) {
	_, url := startServer(t, nil)
	for _, tc := range []struct{ path, body string }{
		{"/api/generate", `{"model":"sim-llama-3.1-8b:latest","prompt":"why is the sky blue","options":{"num_predict":40}}`},
		{"/api/chat", `{"model":"sim-llama-3.1-8b","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"why is the sky blue"}],"options":{"num_predict":40}}`},
	} {
		start := time.Now()
		resp, err := http.Post(url+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var ttft time.Duration
		streamed := 0
		var final map[string]any
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var obj map[string]any
			if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
				t.Fatalf("%s: bad line %q", tc.path, sc.Text())
			}
			if obj["done"] == true {
				final = obj
				break
			}
			if streamed == 0 {
				ttft = time.Since(start)
			}
			streamed++
		}
		e2e := time.Since(start)
		resp.Body.Close()
		if final == nil {
			t.Fatalf("%s: no final object", tc.path)
		}
		ns := func(k string) time.Duration { return time.Duration(final[k].(float64)) }
		if int(final["eval_count"].(float64)) != streamed || streamed < 1 || streamed > 40 {
			t.Errorf("%s: eval_count %v, streamed %d", tc.path, final["eval_count"], streamed)
		}
		if got := int(final["prompt_eval_count"].(float64)); got != 1+5+5+4 && got != 1+5+2+5+5+4 {
			t.Errorf("%s: prompt_eval_count %d", tc.path, got)
		}
		if pe := ns("prompt_eval_duration"); pe <= 0 || pe > ttft {
			t.Errorf("%s: prompt_eval_duration %v, client TTFT %v", tc.path, pe, ttft)
		}
		if tot := ns("total_duration"); tot > e2e || tot < ns("prompt_eval_duration")+ns("eval_duration") {
			t.Errorf("%s: total_duration %v, client e2e %v", tc.path, tot, e2e)
		}
		if want := map[bool]string{true: "length", false: "stop"}[streamed == 40]; final["done_reason"] != want {
			t.Errorf("%s: done_reason %v after %d tokens", tc.path, final["done_reason"], streamed)
		}
	}
}

func TestNonStreamingResponses(t *testing.T) {
	_, url := startServer(t, nil)
	post := func(path, body string) map[string]any {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		return m
	}
	chat := post("/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"text","text":"a b c"}]}],"max_completion_tokens":7,"ignore_eos":true}`)
	msg := chat["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	u := chat["usage"].(map[string]any)
	if countWords(msg) != 7 || u["completion_tokens"].(float64) != 7 || u["prompt_tokens"].(float64) != 1+5+3+4 {
		t.Errorf("chat: %q, usage %v", msg, u)
	}
	// vLLM's completions default: 16 tokens.
	cmpl := post("/v1/completions", `{"prompt":"a b c","ignore_eos":true}`)
	if n := cmpl["usage"].(map[string]any)["completion_tokens"].(float64); n != 16 {
		t.Errorf("completions default max_tokens: %v tokens", n)
	}
	gen := post("/api/generate", `{"model":"sim-llama-3.1-8b","prompt":"a b c","raw":true,"stream":false,"options":{"num_predict":5,"seed":7}}`)
	if gen["prompt_eval_count"].(float64) != 4 || gen["done"] != true || countWords(gen["response"].(string)) != int(gen["eval_count"].(float64)) {
		t.Errorf("generate: %v", gen)
	}
	again := post("/api/generate", `{"model":"sim-llama-3.1-8b","prompt":"a b c","raw":true,"stream":false,"options":{"num_predict":5,"seed":7}}`)
	if gen["response"] != again["response"] {
		t.Errorf("same request seed, different text: %q vs %q", gen["response"], again["response"])
	}
	load := post("/api/generate", `{"model":"sim-llama-3.1-8b"}`)
	if load["done_reason"] != "load" {
		t.Errorf("empty prompt: %v", load)
	}
}

func TestTokenizeMatchesUsage(t *testing.T) {
	_, url := startServer(t, nil)
	count := func(body string) int {
		resp, err := http.Post(url+"/tokenize", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Count       int   `json:"count"`
			MaxModelLen int   `json:"max_model_len"`
			Tokens      []int `json:"tokens"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Count != len(r.Tokens) || r.MaxModelLen != 131072 {
			t.Fatalf("tokenize %s: %+v %v", body, r, err)
		}
		return r.Count
	}
	msgs := `[{"role":"system","content":"you are terse"},{"role":"user","content":"count  these\twords please"}]`
	chat := streamOpenAI(t, context.Background(), url, "/v1/chat/completions",
		`{"messages":`+msgs+`,"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`)
	if got := count(`{"messages":` + msgs + `}`); got != chat.usage.PromptTokens {
		t.Errorf("tokenize messages = %d, chat prompt_tokens = %d", got, chat.usage.PromptTokens)
	}
	cmpl := streamOpenAI(t, context.Background(), url, "/v1/completions",
		`{"prompt":"one two  three","max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`)
	if got := count(`{"prompt":"one two  three"}`); got != cmpl.usage.PromptTokens || got != 4 {
		t.Errorf("tokenize prompt = %d, completions prompt_tokens = %d", got, cmpl.usage.PromptTokens)
	}
	if got := count(`{"prompt":"one two three","add_special_tokens":false}`); got != 3 {
		t.Errorf("without special tokens: %d", got)
	}
	resp, _ := http.Post(url+"/detokenize", "application/json", strings.NewReader(`{"tokens":[0,1,2]}`))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"the a of"`) {
		t.Errorf("detokenize: %s", b)
	}
}

func TestRejectModeErrorsOverHTTP(t *testing.T) {
	_, url := startServer(t, func(c *Config) {
		c.Engine.KVTokens, c.Engine.Preemption = 31*16, PreemptReject
	})
	// Four requests of 100 + 29 tokens need 32 blocks at their peak.
	prompt := strings.TrimSpace(strings.Repeat("w ", 99)) // + BOS = 100
	body := fmt.Sprintf(`{"prompt":%q,"max_tokens":29,"ignore_eos":true,"stream":true}`, prompt)
	var wg sync.WaitGroup
	results := make([]streamResult, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = streamOpenAI(t, context.Background(), url, "/v1/completions", body)
		}()
	}
	wg.Wait()
	failed := 0
	for _, r := range results {
		if r.errMessage != "" {
			failed++
			if !strings.Contains(r.errMessage, "KV cache") {
				t.Errorf("error %q does not mention the KV cache", r.errMessage)
			}
		} else if r.tokens != 29 {
			t.Errorf("a request that did not fail streamed %d tokens", r.tokens)
		}
	}
	if failed == 0 {
		t.Error("no request failed although the KV cache was one block short")
	}
	v, _ := scrape(t, url)
	if got := metric(v, "vllm:request_success_total", `finished_reason="error"`); got != float64(failed) {
		t.Errorf("error count %v, want %d", got, failed)
	}
	// Non-streaming: an HTTP 500 with the error.
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(strings.Replace(body, `"stream":true`, `"stream":false`, 1)))
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 && (resp.StatusCode != 500 || !strings.Contains(string(b), "KV cache")) {
				t.Errorf("status %d: %s", resp.StatusCode, b)
			}
		}()
	}
	wg.Wait()
}

func TestRequestErrors(t *testing.T) {
	_, url := startServer(t, func(c *Config) { c.Model.MaxModelLen = 1000 })
	for _, tc := range []struct {
		name, path, body string
		status           int
		msg              string
	}{
		{"unknown model", "/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`, 404, "does not exist"},
		{"context too long", "/v1/completions", `{"prompt":"a b c","max_tokens":998}`, 400, "maximum context length is 1000 tokens"},
		{"no messages", "/v1/chat/completions", `{"messages":[]}`, 400, "messages"},
		{"n > 1", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"n":2}`, 400, "n = 2"},
		{"bad JSON", "/v1/completions", `{"prompt":`, 400, "invalid JSON"},
		{"max_tokens 0", "/v1/completions", `{"prompt":"a","max_tokens":0}`, 400, "max_tokens"},
		{"batch of prompts", "/v1/completions", `{"prompt":["a","b"]}`, 400, "prompt"},
		{"ollama unknown model", "/api/chat", `{"model":"llama9","messages":[{"role":"user","content":"hi"}]}`, 404, "not found"},
		{"ollama no model", "/api/generate", `{"prompt":"hi"}`, 400, "model is required"},
		{"tokenize nothing", "/tokenize", `{}`, 400, "prompt or messages"},
	} {
		resp, err := http.Post(url+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.msg) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, resp.StatusCode, b, tc.status, tc.msg)
		}
	}
}

func TestInfoEndpoints(t *testing.T) {
	_, url := startServer(t, nil)
	for path, want := range map[string]string{
		"/v1/models":   `"id":"sim-llama-3.1-8b"`,
		"/version":     `"version":"` + Version,
		"/api/version": `"version":"` + Version,
		"/api/tags":    `"name":"sim-llama-3.1-8b:latest"`,
		"/api/ps":      `"context_length":131072`,
		"/health":      "",
	} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
}

func TestClientDisconnectAborts(t *testing.T) {
	_, url := startServer(t, func(c *Config) { c.TimeScale = 1 })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(chatBody(10, 5000, `,"ignore_eos":true`)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for seen := 0; seen < 3 && sc.Scan(); {
		if strings.Contains(sc.Text(), `"content":"`) {
			seen++
		}
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, _ := scrape(t, url)
		if metric(v, "vllm:request_success_total", `finished_reason="abort"`) == 1 && metric(v, "vllm:num_requests_running") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("abort not recorded: running %v", metric(v, "vllm:num_requests_running"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCloseEndsStreams(t *testing.T) {
	srv, url := startServer(t, func(c *Config) { c.TimeScale = 1 })
	done := make(chan streamResult)
	go func() {
		done <- streamOpenAI(t, context.Background(), url, "/v1/chat/completions", chatBody(10, 5000, ""))
	}()
	time.Sleep(100 * time.Millisecond)
	srv.Close()
	select {
	case r := <-done:
		if !strings.Contains(r.errMessage, "shutting down") {
			t.Errorf("stream ended with %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream still open after Close")
	}
}

func TestManyConcurrentStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1000 connections")
	}
	_, url := startServer(t, func(c *Config) { c.TimeScale, c.Engine.MaxNumSeqs = 100, 1024 })
	tr := &http.Transport{MaxIdleConnsPerHost: 1000}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(20, 16, `,"ignore_eos":true`)))
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if c := strings.Count(string(b), `"content":"`) - 1; c != 16 {
				errs <- fmt.Errorf("%d tokens", c)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d streams of 16 tokens in %v", n, time.Since(start))
}

func FuzzParseRequests(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi there"}],"max_tokens":5,"stream":true}`))
	f.Add([]byte(`{"prompt":[[1,2,3]],"max_completion_tokens":3,"min_tokens":1}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"n":1}`))
	f.Add([]byte(`{"model":"m","prompt":"p","system":"s","options":{"num_predict":-1,"seed":3},"stream":false}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		tg := newTextGen(1, 1)
		for _, chat := range []bool{true, false} {
			if g, err := parseOpenAI(body, chat); err == nil {
				if g.prompt < 1 || g.maxTokens < 0 || g.minTokens < 0 {
					t.Fatalf("accepted %+v", g)
				}
				if n, reason, err := g.plan(4096, tg, 256); err == nil && (n < 1 || g.prompt+n > 4096 || reason == "") {
					t.Fatalf("planned %d tokens (%q) for %+v", n, reason, g)
				}
			}
			if g, load, err := parseOllama(body, chat); err == nil && !load && g.prompt < 1 {
				t.Fatalf("accepted %+v", g)
			}
		}
	})
}
