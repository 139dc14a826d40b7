package backend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
)

func TestConnectionReuse(t *testing.T) {
	// Sequential requests share one connection: the terminator after
	// [DONE] is drained in the background, not left to close the socket.
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(script{Steps: []step{{0, content("a") + done}}})
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL, API: record.APIOpenAIChat})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for range 20 {
		var rec record.Record
		c.Do(context.Background(), time.Now(), &Request{Prompt: "x"}, &rec)
		if rec.Error != nil {
			t.Fatal(rec.Error)
		}
		time.Sleep(2 * time.Millisecond) // let the drain finish
	}
	if n := conns.Load(); n > 2 {
		t.Errorf("20 requests opened %d connections, want 1", n)
	}
}

// manyStreams is a server for n concurrent streams of `chunks` chunks,
// one every gap, that notes when each flush returned (ns since base).
type manyStreams struct {
	base    time.Time
	chunks  int
	gap     time.Duration
	mu      sync.Mutex
	flushed map[int][]int64
}

func (m *manyStreams) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct{ Prompt string }
	json.NewDecoder(r.Body).Decode(&body)
	id, _ := strconv.Atoi(body.Prompt)
	w.Header().Set("Content-Type", "text/event-stream")
	var at []int64
	for range m.chunks {
		time.Sleep(m.gap)
		w.Write([]byte(content("t")))
		w.(http.Flusher).Flush()
		at = append(at, int64(time.Since(m.base)))
	}
	w.Write([]byte(done))
	m.mu.Lock()
	m.flushed[id] = at
	m.mu.Unlock()
}

// run sends n concurrent requests with read, which returns each chunk's
// read time in ns since base, and returns how late each chunk was read
// after its flush, sorted.
func (m *manyStreams) run(tb testing.TB, n int, read func(i int) []int64) []time.Duration {
	srvAt := make([][]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { srvAt[i] = read(i) })
	}
	wg.Wait()
	var late []time.Duration
	for i, at := range srvAt {
		if len(at) != m.chunks {
			tb.Fatalf("request %d read %d chunks, want %d", i, len(at), m.chunks)
		}
		for k := range at {
			late = append(late, time.Duration(at[k]-m.flushed[i][k]))
		}
	}
	slices.Sort(late)
	return late
}

func quantile(d []time.Duration, p float64) time.Duration { return d[int(p*float64(len(d)-1))] }

func newManyStreams(chunks int, gap time.Duration) (*manyStreams, *httptest.Server) {
	m := &manyStreams{base: time.Now(), chunks: chunks, gap: gap, flushed: map[int][]int64{}}
	return m, httptest.NewServer(m)
}

// doMany reads stream i with c and returns its chunks' read times.
func doMany(tb testing.TB, c *Client, m *manyStreams) func(int) []int64 {
	return func(i int) []int64 {
		var rec record.Record
		c.Do(context.Background(), m.base, &Request{Prompt: strconv.Itoa(i)}, &rec)
		if rec.Error != nil {
			tb.Errorf("request %d: %+v", i, rec.Error)
		}
		var at []int64
		for _, ch := range rec.Chunks {
			at = append(at, rec.SentNS+ch.AtNS)
		}
		return at
	}
}

// TestManyStreams runs thousands of concurrent streams through one
// Client. It logs how late chunks were stamped after the server flushed
// them; the server shares the machine, so that is an upper bound.
func TestManyStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("many streams: skipped with -short")
	}
	n := 5000
	if raceEnabled { // the race detector allows 8128 live goroutines
		n = 1000
	}
	m, srv := newManyStreams(5, 200*time.Millisecond)
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL, API: record.APIOpenAICompletions, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	late := m.run(t, n, doMany(t, c, m))
	t.Logf("%d streams: chunks stamped p50 %v, p99 %v, max %v after the server's flush", n, quantile(late, 0.5), quantile(late, 0.99), quantile(late, 1))
}

// BenchmarkManyStreams compares how late chunks are stamped with 5,000
// concurrent streams, for Do and for the plainest client (bufio lines and
// time.Now). Each op is one round of 5,000 streams.
func BenchmarkManyStreams(b *testing.B) {
	const n = 5000
	plain := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 8192}}
	clients := map[string]func(*manyStreams, string) func(int) []int64{
		"servebench": func(m *manyStreams, url string) func(int) []int64 {
			c, err := New(Options{BaseURL: url, API: record.APIOpenAICompletions, Timeout: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			return doMany(b, c, m)
		},
		"plain": func(m *manyStreams, url string) func(int) []int64 {
			return func(i int) []int64 {
				resp, err := plain.Post(url+"/v1/completions", "application/json", bytes.NewReader([]byte(`{"prompt":"`+strconv.Itoa(i)+`"}`)))
				if err != nil {
					b.Error(err)
					return nil
				}
				defer resp.Body.Close()
				var at []int64
				for r := bufio.NewReader(resp.Body); ; {
					line, err := r.ReadSlice('\n')
					if err != nil || bytes.HasPrefix(line, []byte("data: [DONE]")) {
						return at
					}
					if bytes.HasPrefix(line, []byte("data: {")) {
						at = append(at, int64(time.Since(m.base)))
					}
				}
			}
		},
	}
	for _, name := range []string{"plain", "servebench"} {
		b.Run(name, func(b *testing.B) {
			var late []time.Duration
			for b.Loop() {
				m, srv := newManyStreams(5, 200*time.Millisecond)
				late = append(late, m.run(b, n, clients[name](m, srv.URL))...)
				srv.Close()
			}
			slices.Sort(late)
			b.ReportMetric(float64(quantile(late, 0.5))/1e6, "p50-late-ms")
			b.ReportMetric(float64(quantile(late, 0.99))/1e6, "p99-late-ms")
		})
	}
}
