package workload

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

//go:generate go test -run TestTraceTestdata -update-traces .

var updateTraces = flag.Bool("update-traces", false, "rewrite testdata/traces from the generator")

// The small traces shipped in testdata/traces are generated here, seeded,
// in the three formats: the same arrivals (bursts over a quiet base) and
// lengths in each; the Mooncake one adds conversations whose turns re-send
// the earlier turns' blocks after one of a few shared system prompts.
func TestTraceTestdata(t *testing.T) {
	for name, body := range generateTraces() {
		path := filepath.Join("testdata", "traces", name)
		if *updateTraces {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, body, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s differs from the generator's (err %v): go generate ./internal/workload", path, err)
		}
	}
}

// generatedRequests is how many requests each generated trace has.
const generatedRequests = 48

// traceRow is one generated request.
type traceRow struct {
	at      time.Duration
	in, out int
	ids     []int64
}

func generateRows() []traceRow {
	rng := rand.New(rand.NewPCG(28, 1))
	const bs = DefaultTraceBlockSize
	nextID := int64(0)
	newIDs := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = nextID
			nextID++
		}
		return out
	}
	system := [][]int64{newIDs(2), newIDs(1), newIDs(3)} // shared system prompts
	type conv struct{ ids []int64 }
	var convs []*conv
	var rows []traceRow
	at := time.Duration(0)
	for i := range generatedRequests {
		// a burst of 8 quick requests every 16, else about 2 a second
		gap := time.Duration(200+rng.IntN(800)) * time.Millisecond
		if i%16 >= 8 && i%16 < 12 {
			gap = time.Duration(10+rng.IntN(40)) * time.Millisecond
		}
		if i > 0 {
			at += gap
		}
		var c *conv
		if len(convs) > 0 && rng.IntN(2) == 0 {
			c = convs[rng.IntN(len(convs))] // the next turn of a conversation
		} else {
			c = &conv{ids: append([]int64(nil), system[rng.IntN(len(system))]...)}
			convs = append(convs, c)
		}
		c.ids = append(c.ids, newIDs(1+rng.IntN(2))...)
		in := (len(c.ids)-1)*bs + 1 + rng.IntN(bs)
		rows = append(rows, traceRow{at: at, in: in, out: 16 + rng.IntN(112), ids: append([]int64(nil), c.ids...)})
		// the partial last block is this turn's own: the next turn sends it
		// whole under another id
		c.ids = append(c.ids[:len(c.ids)-1], newIDs(1)...)
	}
	return rows
}

func generateTraces() map[string][]byte {
	rows := generateRows()
	var moon, azure, burst bytes.Buffer
	azure.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
	burst.WriteString("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n")
	base := time.Date(2023, 11, 16, 18, 15, 46, 680590000, time.UTC)
	for i, r := range rows {
		ids := make([]string, len(r.ids))
		for j, id := range r.ids {
			ids[j] = fmt.Sprint(id)
		}
		fmt.Fprintf(&moon, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n",
			r.at.Milliseconds(), r.in, r.out, strings.Join(ids, ", "))
		fmt.Fprintf(&azure, "%s,%d,%d\n", base.Add(r.at).Format("2006-01-02 15:04:05.0000000"), r.in, r.out)
		model, log, out := "ChatGPT", "Conversation log", r.out
		if i%3 == 2 {
			model, log = "GPT-4", "API log"
		}
		if i == 5 {
			out = 0 // BurstGPT logs failed requests with no response tokens
		}
		fmt.Fprintf(&burst, "%d,%s,%d,%d,%d,%s\n", int(r.at.Seconds()), model, r.in, out, r.in+out, log)
	}
	return map[string][]byte{"mooncake.jsonl": moon.Bytes(), "azure.csv": azure.Bytes(), "burstgpt.csv": burst.Bytes()}
}
