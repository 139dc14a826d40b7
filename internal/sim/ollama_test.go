package sim

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

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
