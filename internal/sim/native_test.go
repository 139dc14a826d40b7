package sim

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// nativeStream posts body to path and reads its SSE events' data: the
// objects in order, the time of the first and of the end.
func nativeStream(t *testing.T, url, path, body string) (events []map[string]any, done bool, first, end time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("%s: status %d, content type %q", path, resp.StatusCode, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		if data = strings.TrimSpace(data); data == "[DONE]" {
			done = true
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(data), &obj); err != nil {
			t.Fatalf("%s: bad event %q", path, data)
		}
		if len(events) == 0 {
			first = time.Since(start)
		}
		events = append(events, obj)
	}
	return events, done, first, time.Since(start)
}

// TestLlamaCppCompletion: /completion (prompt: BOS + 5 words) streams one event per token and a
// last one with stop: true, the counts and timings that fit the client's
// own clock, and no [DONE].
func TestLlamaCppCompletion(t *testing.T) {
	_, url := startServer(t, nil)
	evs, done, ttft, e2e := nativeStream(t, url, "/completion", `{"prompt":"why is the sky blue","n_predict":12,"ignore_eos":true,"stream":true}`)
	if done || len(evs) != 13 {
		t.Fatalf("%d events, [DONE] %v; want 12 tokens and the final event, no [DONE]", len(evs), done)
	}
	var text strings.Builder
	for i, e := range evs[:12] {
		if e["stop"] != false || e["tokens_predicted"] != float64(i+1) || e["tokens_evaluated"] != 6.0 {
			t.Errorf("event %d: %v", i, e)
		}
		text.WriteString(e["content"].(string))
	}
	f := evs[12]
	if f["stop"] != true || f["content"] != "" || f["stop_type"] != "limit" || f["tokens_predicted"] != 12.0 || f["tokens_evaluated"] != 6.0 {
		t.Errorf("final event %v", f)
	}
	tm := f["timings"].(map[string]any)
	ms := func(k string) time.Duration { return time.Duration(tm[k].(float64) * 1e6) }
	if tm["prompt_n"] != 6.0 || tm["predicted_n"] != 12.0 || tm["cache_n"] != 0.0 {
		t.Errorf("timings %v", tm)
	}
	if p := ms("prompt_ms"); p <= 0 || p > ttft {
		t.Errorf("prompt_ms %v, client TTFT %v", p, ttft)
	}
	if d := ms("predicted_ms"); d <= 0 || ms("prompt_ms")+d > e2e {
		t.Errorf("prompt_ms %v + predicted_ms %v, client e2e %v", ms("prompt_ms"), d, e2e)
	}
	if text.Len() == 0 {
		t.Error("no text")
	}
}

// TestSGLangGenerate: /generate repeats the whole text in every event,
// ends with a finish_reason object and e2e_latency, then [DONE].
func TestSGLangGenerate(t *testing.T) {
	_, url := startServer(t, nil)
	evs, done, _, e2e := nativeStream(t, url, "/generate", `{"text":"why is the sky blue","sampling_params":{"max_new_tokens":10,"ignore_eos":true},"stream":true}`)
	if !done || len(evs) != 10 {
		t.Fatalf("%d events, [DONE] %v; want 10 and [DONE]", len(evs), done)
	}
	prev := ""
	for i, e := range evs {
		text, meta := e["text"].(string), e["meta_info"].(map[string]any)
		if !strings.HasPrefix(text, prev) || len(text) <= len(prev) {
			t.Errorf("event %d: text %q does not continue %q", i, text, prev)
		}
		prev = text
		if meta["prompt_tokens"] != 6.0 || meta["completion_tokens"] != float64(i+1) || meta["cached_tokens"] != 0.0 {
			t.Errorf("event %d: meta_info %v", i, meta)
		}
		if last := i == len(evs)-1; (meta["finish_reason"] == nil) == last || (meta["e2e_latency"] != nil) != last {
			t.Errorf("event %d: finish_reason %v, e2e_latency %v", i, meta["finish_reason"], meta["e2e_latency"])
		}
	}
	meta := evs[9]["meta_info"].(map[string]any)
	if fr := meta["finish_reason"].(map[string]any); fr["type"] != "length" || fr["length"] != 10.0 {
		t.Errorf("finish_reason %v", fr)
	}
	if l := time.Duration(meta["e2e_latency"].(float64) * 1e9); l <= 0 || l > e2e {
		t.Errorf("e2e_latency %v, client e2e %v", l, e2e)
	}
	resp, err := http.Get(url + "/get_model_info")
	if err != nil {
		t.Fatal(err)
	}
	var info map[string]any
	json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if info["model_path"] != "sim-llama-3.1-8b" {
		t.Errorf("/get_model_info %v", info)
	}
}

// TestTGIGenerateStream: /generate_stream sends a token per event; the
// last carries the whole generated_text and details; no [DONE].
func TestTGIGenerateStream(t *testing.T) {
	_, url := startServer(t, nil)
	evs, done, _, _ := nativeStream(t, url, "/generate_stream", `{"inputs":"why is the sky blue","parameters":{"max_new_tokens":8,"details":true}}`)
	if done || len(evs) != 8 {
		t.Fatalf("%d events, [DONE] %v; want 8, no [DONE]", len(evs), done)
	}
	var text strings.Builder
	for i, e := range evs {
		tok := e["token"].(map[string]any)
		text.WriteString(tok["text"].(string))
		if last := i == len(evs)-1; (e["generated_text"] == nil) == last || (e["details"] == nil) == last || tok["special"] != false {
			t.Errorf("event %d: %v", i, e)
		}
	}
	last := evs[7]
	det := last["details"].(map[string]any)
	if last["generated_text"] != text.String() || det["generated_tokens"] != 8.0 || det["input_length"] != 6.0 {
		t.Errorf("last event %v, streamed text %q", last, text.String())
	}
	if det["finish_reason"] != "length" && det["finish_reason"] != "eos_token" {
		t.Errorf("finish_reason %v", det["finish_reason"])
	}
}

// TestNativeShapesReportPrefixHits: the same 41-token prompt sent twice;
// the second finds its two full 16-token blocks cached, and says so the way
// each engine does: llama.cpp's cache_n with prompt_n counting only the
// tokens evaluated, SGLang's meta_info.cached_tokens.
func TestNativeShapesReportPrefixHits(t *testing.T) {
	_, url := startServer(t, nil)
	prompt := strings.TrimSpace(strings.Repeat("why is the sky blue ", 8))
	final := func(path, body string) map[string]any {
		evs, _, _, _ := nativeStream(t, url, path, body)
		return evs[len(evs)-1]
	}
	llama := `{"prompt":"` + prompt + `","n_predict":2,"ignore_eos":true,"stream":true}`
	if tm := final("/completion", llama)["timings"].(map[string]any); tm["cache_n"] != 0.0 || tm["prompt_n"] != 41.0 {
		t.Errorf("first request: timings %v, want cache_n 0 and prompt_n 41", tm)
	}
	if tm := final("/completion", llama)["timings"].(map[string]any); tm["cache_n"] != 32.0 || tm["prompt_n"] != 9.0 {
		t.Errorf("second request: timings %v, want cache_n 32 and prompt_n 9", tm)
	}
	sglang := `{"text":"` + prompt + `","sampling_params":{"max_new_tokens":2,"ignore_eos":true},"stream":true}`
	if m := final("/generate", sglang)["meta_info"].(map[string]any); m["cached_tokens"] != 32.0 {
		t.Errorf("SGLang meta_info %v, want cached_tokens 32", m)
	}
}
