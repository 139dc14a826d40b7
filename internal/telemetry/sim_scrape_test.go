package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/sim"
)

// simScrapeInterval is how often the simulator test reads /metrics: the
// "one sample interval" its series may lag the client's view by.
const simScrapeInterval = 50 * time.Millisecond

// simReading is one scrape: the wall span it was taken in, and what it said.
type simReading struct {
	t0, t1               time.Time
	running, waiting, kv float64
}

// inFlight counts the requests the client had sent and not yet fully read.
type inFlight struct {
	mu     sync.Mutex
	events []time.Time // sends
	ends   []time.Time
}

func (f *inFlight) add(start bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if start {
		f.events = append(f.events, time.Now())
	} else {
		f.ends = append(f.ends, time.Now())
	}
}

// countAt is the number in flight at t.
func (f *inFlight) countAt(t time.Time) int {
	n := 0
	for _, s := range f.events {
		if !s.After(t) {
			n++
		}
	}
	for _, e := range f.ends {
		if !e.After(t) {
			n--
		}
	}
	return n
}

// sometimeIn says whether the client had want requests in flight at some
// moment of [a, b].
func (f *inFlight) sometimeIn(a, b time.Time, want int) bool {
	cands := []time.Time{a, b}
	for _, ts := range [][]time.Time{f.events, f.ends} {
		for _, t := range ts {
			if t.After(a) && t.Before(b) {
				cands = append(cands, t)
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Before(cands[j]) })
	for _, t := range cands {
		if f.countAt(t) == want {
			return true
		}
	}
	return false
}

// TestSimulatorScrapeAgreesWithItsState loads the simulator with more
// streams than it has slots and reads its /metrics through ServerSource
// all along: quiet, the series are exactly zero; loaded, running never
// exceeds the slots and equals them whenever a request waits; running +
// waiting is what the client had in flight within one scrape interval;
// the KV fraction stays within what the admitted sequences can hold.
func TestSimulatorScrapeAgreesWithItsState(t *testing.T) {
	const slots, streams, maxTokens = 2, 5, 120
	cfg := sim.DefaultConfig()
	cfg.Engine.MaxNumSeqs, cfg.Engine.KVTokens, cfg.Jitter, cfg.TimeScale = slots, 4096, 0, 2
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base, err := s.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src := NewServerSource(Endpoint{URL: base + "/metrics"})
	read := func() simReading {
		t.Helper()
		r := simReading{t0: time.Now()}
		got, err := src.Read(ctx, 0)
		r.t1 = time.Now()
		if err != nil {
			t.Fatal(err)
		}
		sv := got[0].Server
		if sv.Engine != "vllm" || sv.Running == nil || sv.Waiting == nil || sv.KVCacheUsage == nil {
			t.Fatalf("scrape %+v: want vLLM's running, waiting and KV series", sv)
		}
		r.running, r.waiting, r.kv = *sv.Running, *sv.Waiting, *sv.KVCacheUsage
		return r
	}
	quiet := func(when string) {
		if r := read(); r.running != 0 || r.waiting != 0 || r.kv != 0 {
			t.Errorf("%s: running %v waiting %v kv %v, want all 0", when, r.running, r.waiting, r.kv)
		}
	}
	quiet("before the load")

	var fl inFlight
	prompts := make(chan int, streams)
	var wg sync.WaitGroup
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prompts <- simStream(t, base, cfg.Model.Name, maxTokens, &fl)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var rs []simReading
	for loop := true; loop; {
		rs = append(rs, read())
		select {
		case <-done:
			loop = false
		case <-time.After(simScrapeInterval):
		}
	}
	quiet("after the load")
	close(prompts)
	prompt := 0
	for p := range prompts {
		prompt = max(prompt, p)
	}
	checkSimReadings(t, rs, &fl, slots, streams, simKVBounds(cfg, slots, prompt, maxTokens))
}

// simKVBounds is the KV fraction of slots sequences holding their prompt
// only (the least once all are admitted), and holding prompt + output.
func simKVBounds(cfg sim.Config, slots, prompt, out int) [2]float64 {
	bs := float64(cfg.Engine.BlockSize)
	blocks := math.Floor(float64(cfg.Engine.KVTokens) / bs)
	return [2]float64{float64(slots) * math.Ceil(float64(prompt)/bs) / blocks,
		float64(slots) * math.Ceil(float64(prompt+out)/bs) / blocks}
}

func checkSimReadings(t *testing.T, rs []simReading, fl *inFlight, slots, streams int, kv [2]float64) {
	t.Helper()
	full, kvMax := false, 0.0
	for i, r := range rs {
		if r.running > float64(slots) {
			t.Errorf("reading %d: running %v, above the %d slots", i, r.running, slots)
		}
		// Between a step that frees slots and the next that fills them, a
		// request waits with a slot free: never for longer than a reading.
		if r.waiting > 0 && r.running < float64(slots) && i+1 < len(rs) &&
			rs[i+1].waiting >= r.waiting && rs[i+1].running < float64(slots) {
			t.Errorf("readings %d, %d: running %v, %v with %v, %v waiting; the %d slots must fill before requests wait",
				i, i+1, r.running, rs[i+1].running, r.waiting, rs[i+1].waiting, slots)
		}
		n := int(r.running + r.waiting)
		if !fl.sometimeIn(r.t0.Add(-simScrapeInterval), r.t1.Add(simScrapeInterval), n) {
			t.Errorf("reading %d: running+waiting = %d, which the client never had in flight within %v",
				i, n, simScrapeInterval)
		}
		if r.kv > kv[1]+1e-12 {
			t.Errorf("reading %d: kv %v above what %d full sequences hold (%v)", i, r.kv, slots, kv[1])
		}
		full = full || (r.running == float64(slots) && r.waiting == float64(streams-slots))
		kvMax = max(kvMax, r.kv)
	}
	if !full {
		t.Errorf("no reading with running %d and waiting %d of %d readings", slots, streams-slots, len(rs))
	}
	if kvMax < kv[0] {
		t.Errorf("kv peaked at %v, below the %v the admitted prompts alone hold", kvMax, kv[0])
	}
}

// simStream sends one streamed completion that ignores EOS and reads it
// to the end; it returns the prompt's token count.
func simStream(t *testing.T, base, model string, maxTokens int, fl *inFlight) int {
	body, _ := json.Marshal(map[string]any{"model": model, "prompt": "Tell me a long story about a lighthouse keeper.",
		"max_tokens": maxTokens, "ignore_eos": true, "stream": true,
		"stream_options": map[string]any{"include_usage": true}})
	fl.add(true)
	resp, err := http.Post(base+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		fl.add(false)
		return 0
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fl.add(false)
	var prompt int
	for _, line := range bytes.Split(b, []byte("\n")) {
		var c struct {
			Usage *struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(bytes.TrimPrefix(line, []byte("data: ")), &c) == nil && c.Usage != nil {
			prompt = c.Usage.PromptTokens
		}
	}
	if prompt == 0 {
		t.Errorf("no usage in the stream: %.200s", b)
	}
	return prompt
}
