package sim

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRejectModeErrorsOverHTTP(t *testing.T) {
	// Four requests of 100 + 400 tokens, each ~0.7 s long at scale 4, sent
	// together: however their arrivals straddle steps they overlap enough to
	// need more than 100 blocks (1600 tokens) before the first one ends.
	_, url := startServer(t, func(c *Config) {
		c.TimeScale, c.Engine.KVTokens, c.Engine.Preemption = 4, 100*16, PreemptReject
	})
	prompt := strings.TrimSpace(strings.Repeat("w ", 99)) // + BOS = 100
	const out = 400
	body := fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"ignore_eos":true,"stream":true}`, prompt, out)
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
		} else if r.tokens != out {
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
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody(10, 5000, `,"ignore_eos":true`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), `"content":"`) {
	}
	go srv.Close() // with the request mid-stream
	ended := make(chan string)
	go func() {
		last := ""
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: {") {
				last = sc.Text()
			}
		}
		ended <- last
	}()
	select {
	case last := <-ended:
		if !strings.Contains(last, `"error"`) || !strings.Contains(last, "shutting down") {
			t.Errorf("stream's last event: %s", last)
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
