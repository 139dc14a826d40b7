package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

// TestTimeScaleHeader: every response announces the time scale, so that a
// client can convert what it measures to model time.
func TestTimeScaleHeader(t *testing.T) {
	for _, scale := range []float64{1, 50} {
		_, url := startServer(t, func(c *Config) { c.TimeScale = scale })
		for _, path := range []string{"/v1/models", "/health", "/nope"} {
			resp, err := http.Get(url + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get(TimeScaleHeader); got != strconv.FormatFloat(scale, 'g', -1, 64) {
				t.Errorf("scale %v, %s: %s = %q", scale, path, TimeScaleHeader, got)
			}
		}
	}
}
