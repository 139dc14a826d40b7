package bench

// Load-generator performance checks (docs/PERFORMANCE.md). They are Go
// benchmarks, not timed tests: run them on a quiet machine with
//
//	go test ./internal/bench -run '^$' -bench . -benchtime 1x
//
// and read the reported metrics. Each runs one fixed scenario per
// iteration against an in-process streaming server.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/stats"
	"github.com/servebench/servebench/internal/telemetry"
)

// stampServer streams tokens chunks gap apart and remembers, per request
// (named by its prompt), when it flushed each chunk, so the client's
// timestamps can be compared with the true send times.
type stampServer struct {
	tokens int
	gap    time.Duration
	mu     sync.Mutex
	sent   map[string][]time.Time
}

func (s *stampServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id := promptOf(body)
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	times := make([]time.Time, 0, s.tokens)
	start := time.Now()
	for i := range s.tokens {
		if s.gap > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * s.gap)))
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"text\":\" w%d\"}]}\n\n", i)
		fl.Flush()
		times = append(times, time.Now())
	}
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", s.tokens)
	fl.Flush()
	if s.sent != nil {
		s.mu.Lock()
		s.sent[id] = times
		s.mu.Unlock()
	}
}

// promptOf pulls the "prompt" string out of a completions body without a
// full JSON decode.
func promptOf(b []byte) string {
	s := string(b)
	i := strings.Index(s, `"prompt":"`)
	if i < 0 {
		return ""
	}
	s = s[i+10:]
	return s[:strings.IndexByte(s, '"')]
}

type memSink struct {
	mu   sync.Mutex
	agg  metrics.Aggregator
	recs []*record.Record
	keep bool
}

func (m *memSink) emit(r *record.Record) {
	m.mu.Lock()
	m.agg.Add(r)
	if m.keep {
		m.recs = append(m.recs, r)
	}
	m.mu.Unlock()
}

func newClient(b *testing.B, url string) *backend.Client {
	c, err := backend.New(backend.Options{BaseURL: url, API: record.APIOpenAICompletions, Model: "m"})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// sendIDs returns a Sender whose prompt is the record's id.
func sendIDs(c *backend.Client, epoch time.Time, maxTokens int) load.Sender {
	return func(ctx context.Context, rec *record.Record) {
		c.Do(ctx, epoch, &backend.Request{Prompt: "r" + strconv.FormatInt(rec.ID, 10), MaxTokens: maxTokens}, rec)
	}
}

// BenchmarkTimestampLag: how long after the server flushed a chunk does
// the client's timestamp say it arrived? Target: p99 under 1 ms. The
// "plain" variant is the plainest Go client (bufio lines, a timestamp per
// data line), run the same way: the practical limit on this machine.
func BenchmarkTimestampLag(b *testing.B) {
	for _, streams := range []int{16, 64} {
		for _, client := range []string{"servebench", "plain"} {
			b.Run(fmt.Sprintf("streams=%d/%s", streams, client), func(b *testing.B) {
				for range b.N {
					timestampLag(b, streams, client == "plain")
				}
			})
		}
	}
}

// timestampLag runs streams concurrent streams of 50 chunks 5 ms apart. All
// streams send in step, as a batching server's do, so each step is a burst.
func timestampLag(b *testing.B, streams int, plain bool) {
	lagRun(b, streams, plain, nil, 0)
}

// timestampLagSampled is timestampLag with srcs sampled every interval
// while the streams run (BenchmarkTimestampLagTelemetry).
func timestampLagSampled(b *testing.B, streams int, srcs []telemetry.Source, every time.Duration) {
	lagRun(b, streams, false, srcs, every)
}

func lagRun(b *testing.B, streams int, plain bool, srcs []telemetry.Source, every time.Duration) {
	srv := &stampServer{tokens: 50, gap: 5 * time.Millisecond, sent: map[string][]time.Time{}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	epoch := time.Now()
	sink := &memSink{keep: true}
	send := sendIDs(newClient(b, hs.URL), epoch, 50)
	if plain {
		send = plainSender(hs.URL, epoch)
	}
	r := &load.Runner{Epoch: epoch, Emit: sink.emit, Send: send}
	if len(srcs) > 0 {
		sm := telemetry.StartSampler(telemetry.SamplerOptions{Epoch: epoch, Interval: every, Sources: srcs, Out: io.Discard})
		defer sm.Stop()
	}
	if _, err := r.Run(context.Background(), load.Point{Load: record.Load{Concurrency: streams}, Requests: 10 * streams}); err != nil {
		b.Fatal(err)
	}
	// the handler stores a stream's flush times after its last write,
	// when the client may already be done: wait for every handler
	hs.Close()
	var lag stats.Sample
	for _, rec := range sink.recs {
		sent := srv.sent["r"+strconv.FormatInt(rec.ID, 10)]
		if rec.Error != nil || len(sent) != len(rec.Chunks) {
			b.Fatalf("request %d: %v, %d chunks vs %d sent", rec.ID, rec.Error, len(rec.Chunks), len(sent))
		}
		for i, c := range rec.Chunks {
			at := epoch.Add(time.Duration(rec.SentNS + c.AtNS))
			lag.Add(float64(at.Sub(sent[i])) / 1e6)
		}
	}
	b.ReportMetric(lag.Quantile(0.5), "lag_p50_ms")
	b.ReportMetric(lag.Quantile(0.99), "lag_p99_ms")
	b.ReportMetric(lag.Quantile(1), "lag_max_ms")
	b.ReportMetric(float64(lag.Len()), "chunks")
}

// plainSender is the plainest streaming client: POST, then read lines with
// bufio and stamp every data line that is not the usage or [DONE].
func plainSender(url string, epoch time.Time) load.Sender {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 10000, DisableCompression: true}}
	return func(ctx context.Context, rec *record.Record) {
		body := `{"model":"m","prompt":"r` + strconv.FormatInt(rec.ID, 10) + `","stream":true}`
		rec.SentNS = int64(time.Since(epoch))
		resp, err := hc.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
		if err != nil {
			rec.Error = &record.Error{Class: record.ClassConnect, Message: err.Error()}
			return
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadSlice('\n')
			now := time.Now()
			if err != nil {
				break
			}
			if bytes.HasPrefix(line, []byte("data: {\"choices\":[{")) {
				rec.Chunks = append(rec.Chunks, record.Chunk{AtNS: int64(now.Sub(epoch)) - rec.SentNS, Tokens: 1})
			}
		}
		rec.EndNS = int64(time.Since(epoch))
	}
}

// BenchmarkOpenLoop500: arrivals at 500 requests/s for 10 s. Target: the
// achieved send rate within 1% of the schedule's, with the dispatcher's lag
// behind the schedule reported. A Poisson schedule's own rate differs from
// 500 by chance (±1.4% for 5,000 arrivals), so the ratio that tests the
// client is sent rate / scheduled rate; constant arrivals pin both to 500.
func BenchmarkOpenLoop500(b *testing.B) {
	for _, arrival := range []string{load.ArrivalConstant, load.ArrivalPoisson} {
		b.Run(arrival, func(b *testing.B) {
			for range b.N {
				openLoop500(b, arrival)
			}
		})
	}
}

func openLoop500(b *testing.B, arrival string) {
	hs := httptest.NewServer(&stampServer{tokens: 8})
	defer hs.Close()
	epoch := time.Now()
	sink := &memSink{keep: true}
	r := &load.Runner{Epoch: epoch, Emit: sink.emit, Send: sendIDs(newClient(b, hs.URL), epoch, 8)}
	c, err := r.Run(context.Background(), load.Point{Load: record.Load{Rate: 500}, Duration: 10 * time.Second, Arrival: load.Arrival{Process: arrival}, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var s0, s1, t0, t1 int64 = 1 << 62, 0, 1 << 62, 0
	for _, rec := range sink.recs {
		s0, s1 = min(s0, rec.ScheduledNS), max(s1, rec.ScheduledNS)
		t0, t1 = min(t0, rec.SentNS), max(t1, rec.SentNS)
	}
	n := float64(len(sink.recs) - 1)
	sched, sent := n/(float64(s1-s0)/1e9), n/(float64(t1-t0)/1e9)
	p := sink.agg.Points()[0]
	b.ReportMetric(sched, "scheduled_rps")
	b.ReportMetric(sent, "sent_rps")
	b.ReportMetric(sent/sched, "sent_vs_scheduled")
	b.ReportMetric(c.LagP99MS, "dispatch_lag_p99_ms")
	b.ReportMetric(get(p.Queue, "p99"), "queue_p99_ms")
	b.ReportMetric(float64(p.Requests.Failed), "failed")
	b.ReportMetric(c.CPUPercent, "client_cpu_pct")
}

// BenchmarkStreams5000: 5,000 concurrent streams, each 40 tokens 50 ms
// apart (2 s). Target: all held to the end, none failed; memory reported.
func BenchmarkStreams5000(b *testing.B) {
	for range b.N {
		hs := httptest.NewServer(&stampServer{tokens: 40, gap: 50 * time.Millisecond})
		epoch := time.Now()
		sink := &memSink{}
		r := &load.Runner{Epoch: epoch, Emit: sink.emit, Send: sendIDs(newClient(b, hs.URL), epoch, 40)}
		var ms runtime.MemStats
		done := make(chan struct{})
		var peakHeap uint64
		go func() {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					runtime.ReadMemStats(&ms)
					peakHeap = max(peakHeap, ms.HeapInuse)
				}
			}
		}()
		c, err := r.Run(context.Background(), load.Point{Load: record.Load{Concurrency: 5000}, Requests: 5000})
		close(done)
		if err != nil {
			b.Fatal(err)
		}
		hs.Close()
		p := sink.agg.Points()[0]
		b.ReportMetric(float64(p.Requests.Completed), "completed")
		b.ReportMetric(float64(p.Requests.Failed), "failed")
		b.ReportMetric(float64(p.ConcurrencyMax), "peak_in_flight")
		b.ReportMetric(get(p.ITL, "p50"), "itl_p50_ms")
		b.ReportMetric(get(p.ITL, "p99"), "itl_p99_ms")
		b.ReportMetric(float64(peakHeap)/(1<<20), "peak_heap_MiB")
		b.ReportMetric(c.CPUPercent, "client_cpu_pct")
	}
}

func get(d stats.Dist, k string) float64 {
	v, _ := d.Get(k)
	return v
}
