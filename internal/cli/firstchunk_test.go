package cli

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/metrics"
)

// TestRunFirstChunkBundlesTokens: a server whose first chunk carries 2 or 3
// of its 8 tokens, then one token every 20 ms. Decode speed counts the
// tokens after the first chunk over the time after it (TPOT 20 ms, 50
// tok/s); counting n − 1 tokens would read TPOT 17.1 or 14.3 ms. The
// client is held to the server's own record of what it sent.
func TestRunFirstChunkBundlesTokens(t *testing.T) {
	for _, k0 := range []int{2, 3} {
		t.Run(fmt.Sprintf("first chunk %d tokens", k0), func(t *testing.T) {
			s := &scripted{ttft: 10 * time.Millisecond, gap: 20 * time.Millisecond, tokens: 8, prompt: 16, first: k0}
			url := newScripted(t, s)
			code, stdout, stderr := runMain(t, "run", "--url", url, "--api", "openai-completions", "--model", "m",
				"--concurrency", "1", "--requests", "3", "--prompt-tokens", "16", "--output-tokens", "8",
				"--tokenizer", "cl100k_base", "--json")
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			var sum metrics.Summary
			if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Points) != 1 {
				t.Fatalf("summary: %v\n%s", err, stdout)
			}
			p := sum.Points[0]
			_, srvGap := s.truth()
			between(t, "tpot p50", p.TPOT, "p50", srvGap, 1)
			between(t, "itl mean", p.ITL, "mean", srvGap, 1)
			// Decode speed is 1000/TPOT: within the server's range the other way round.
			speed := span{1000 / (srvGap.max + 1), 1000 / srvGap.min}
			between(t, "decode speed p50", p.DecodeTPSReq, "p50", speed, 0.5)
			if want := 3 * (8 - k0); p.ITL.Count != want {
				t.Errorf("itl count %d, want %d", p.ITL.Count, want)
			}
		})
	}
}
