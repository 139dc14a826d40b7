package sim

import (
	"testing"
)

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
