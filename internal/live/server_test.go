package live

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/load"
	"github.com/servebench/servebench/internal/metrics"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// stream reads a server's event stream, a state a message.
type stream struct {
	resp *http.Response
	msgs chan State
}

func openStream(t *testing.T, s *Server, url string) *stream {
	t.Helper()
	n := len(s.subscribers())
	resp, err := http.Get(url + "/events")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /events: %s", resp.Status)
	}
	st := &stream{resp: resp, msgs: make(chan State, 100)}
	go func() {
		defer close(st.msgs)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var s State
				if err := json.Unmarshal([]byte(data), &s); err != nil {
					t.Errorf("event data %q: %v", data, err)
				}
				st.msgs <- s
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	for len(s.subscribers()) == n { // registered before the first push
		time.Sleep(time.Millisecond)
	}
	return st
}

// next is the next message, or fails after a while.
func (st *stream) next(t *testing.T) (State, bool) {
	t.Helper()
	select {
	case s, ok := <-st.msgs:
		return s, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
		return State{}, false
	}
}

// none: no message is waiting.
func (st *stream) none(t *testing.T) {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	select {
	case s := <-st.msgs:
		t.Fatalf("an event too many: seq %d", s.Seq)
	default:
	}
}

func (s *Server) subscribers() []*subscriber {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	var out []*subscriber
	for sub := range s.subs {
		out = append(out, sub)
	}
	return out
}

// testServer serves a Server on the clock clk (no pushes but the test's);
// its streams end before the test does.
func testServer(t *testing.T, clk *fakeClock) (*Server, string) {
	s := newServer("", clk.now)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(func() { s.shutdown() })
	return s, hs.URL
}

func rec(point, id int, class string) *record.Record {
	r := &record.Record{Point: point, ID: int64(id), Phase: record.PhaseMeasured, Load: record.Load{Concurrency: 2},
		SentNS: int64(id) * 1e7, FirstTokenNS: int64(id)*1e7 + 5e6, FirstOutputNS: int64(id)*1e7 + 5e6, EndNS: int64(id)*1e7 + 9e6,
		OutputTokens: 4, PromptTokens: 8}
	if class != "" {
		r.Error = &record.Error{Class: class, Message: "boom"}
		r.OutputTokens = 0
	}
	return r
}

func TestPushesAtMostOneASecond(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	s, url := testServer(t, clk)
	st := openStream(t, s, url)
	s.Begin(&record.Run{}, clk.now(), 1)
	// pushes asked for within one second: one goes out
	var pushed int
	for range 5 {
		if s.push() {
			pushed++
		}
		clk.add(100 * time.Millisecond)
	}
	if pushed != 1 {
		t.Errorf("pushes within 0.5 s: got %d, want 1", pushed)
	}
	first, _ := st.next(t)
	if !first.Full || first.Status != StatusRunning {
		t.Errorf("a new stream's first event: full %v, status %q; want the whole state, running", first.Full, first.Status)
	}
	st.none(t)
	clk.add(500 * time.Millisecond) // a second after the first
	if !s.push() {
		t.Fatal("a push a second after the last was refused")
	}
	second, _ := st.next(t)
	if second.Full || second.Seq != first.Seq+1 {
		t.Errorf("the next event: full %v, seq %d after %d; want a delta, the next seq", second.Full, second.Seq, first.Seq)
	}
	st.none(t)
}

func TestDeltaCarriesWhatChanged(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	s, url := testServer(t, clk)
	s.Begin(&record.Run{Target: record.Target{URL: "http://x", API: "openai-chat", Model: "m"}}, clk.now(), 2)
	s.Point(load.Point{Index: 0, Load: record.Load{Concurrency: 2}, Requests: 10})
	st := openStream(t, s, url)
	s.push()
	st.next(t) // the whole state
	for i := range 4 {
		s.Sent()
		s.Record(rec(0, i, ""))
	}
	s.Sent()
	s.Record(rec(0, 4, record.ClassHTTP5xx))
	s.drain()
	clk.add(time.Second)
	s.push()
	d, _ := st.next(t)
	// the delta holds the counts, the point's figures so far, one tick and
	// the events since the last push (the first 5xx)
	if d.Requests.Done != 5 || d.Requests.Failed != 1 || d.Requests.Errors[record.ClassHTTP5xx] != 1 {
		t.Errorf("requests: got %+v, want 5 done, 1 failed as %s", d.Requests, record.ClassHTTP5xx)
	}
	if len(d.Points) != 1 || d.Points[0].TTFT.Count != 4 || d.Points[0].Final {
		t.Errorf("points: got %+v, want point 0 with 4 TTFTs, not final", d.Points)
	}
	if len(d.Series) != 1 || d.Series[0].OutputTPS != 16 {
		t.Errorf("series: got %+v, want one tick of 16 output tok/s (4 requests × 4 tokens in 1 s)", d.Series)
	}
	if len(d.Events) != 1 || d.Events[0].Kind != EventError {
		t.Errorf("events: got %+v, want the first error alone", d.Events)
	}
	if d.Point == nil || d.Point.Remaining == nil || *d.Point.Remaining != 5 {
		t.Errorf("point: got %+v, want 5 requests remaining", d.Point)
	}
	clk.add(time.Second)
	s.push()
	d, _ = st.next(t)
	if len(d.Points) != 0 || len(d.Events) != 0 || len(d.Series) != 1 {
		t.Errorf("a push with no record since: %d points, %d events, %d ticks; want 0, 0, 1", len(d.Points), len(d.Events), len(d.Series))
	}
}

func TestEndHoldsTheSummary(t *testing.T) {
	s := newServer("", time.Now)
	s.Begin(&record.Run{}, time.Now(), 1)
	var agg metrics.Aggregator
	for i := range 50 {
		r := rec(0, i, "")
		agg.Add(r)
		s.Record(r)
	}
	sum := metrics.Summarize(nil, &agg)
	sum.Warnings = append(sum.Warnings, "a warning")
	s.End(sum, nil)
	s.feed.mu.Lock()
	st := s.feed.state(true)
	s.feed.mu.Unlock()
	if st.Status != StatusMeasured || len(st.Points) != 1 {
		t.Fatalf("got status %q with %d points, want measured with 1", st.Status, len(st.Points))
	}
	got, _ := json.Marshal(st.Points[0].TTFT)
	want, _ := json.Marshal(sum.Points[0].TTFT)
	if string(got) != string(want) || !st.Points[0].Final {
		t.Errorf("TTFT: got %s (final %v), want the summary's %s", got, st.Points[0].Final, want)
	}
	if len(st.Warnings) != 1 {
		t.Errorf("warnings: got %v, want the summary's", st.Warnings)
	}
}

// The run's Record never waits: a full queue drops its oldest.
func TestRecordNeverWaits(t *testing.T) {
	s := newServer("", time.Now) // nothing collects
	done := make(chan struct{})
	go func() {
		for i := range recordQueue + 10 {
			s.Record(rec(0, i, ""))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Record waited for a full queue")
	}
	if got := s.dropped.Load(); got != 10 {
		t.Errorf("dropped: got %d, want 10", got)
	}
	s.drain()
	if s.done != recordQueue || (<-chan *record.Record)(s.recs) == nil {
		t.Errorf("records folded in: got %d, want %d", s.done, recordQueue)
	}
}

func TestLoopback(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:0", true},
		{"[::1]:8089", true},
		{"localhost:8089", true},
		{":8089", false},        // every interface
		{"0.0.0.0:8089", false}, // every interface
		{"192.0.2.7:8089", false},
		{"example.com:80", false}, // a name may resolve anywhere
	} {
		got, err := Loopback(c.addr)
		if err != nil || got != c.want {
			t.Errorf("Loopback(%q): got %v, %v; want %v", c.addr, got, err, c.want)
		}
	}
	if _, err := Loopback("8089"); err == nil {
		t.Error("Loopback(\"8089\"): no error for an address without a port")
	}
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestListenDefaultIsLoopbackWithoutToken(t *testing.T) {
	s, err := Listen(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.shutdown()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || strings.Contains(s.URL(), "token") {
		t.Errorf("URL: got %s, want loopback without a token", s.URL())
	}
	if code := get(t, s.URL()+"state"); code != http.StatusOK {
		t.Errorf("GET /state: got %d, want 200", code)
	}
	// a name made to point at this machine (DNS rebinding) is refused
	for host, want := range map[string]int{"evil.example:80": http.StatusForbidden, "localhost:1": http.StatusOK, "[::1]:1": http.StatusOK} {
		req, _ := http.NewRequest("GET", s.URL()+"state", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: got %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func TestNonLoopbackNeedsToken(t *testing.T) {
	s, err := Listen(Options{Addr: "0.0.0.0:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.shutdown()
	base, token, ok := strings.Cut(s.URL(), "?token=")
	if !ok || len(token) < 32 {
		t.Fatalf("URL %s: want a token of 16 random bytes", s.URL())
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if host, _ := os.Hostname(); host != "" && u.Hostname() != host {
		t.Errorf("URL %s: want the machine's name for every interface", s.URL())
	}
	base = "http://" + net.JoinHostPort("127.0.0.1", u.Port()) + "/" // reached over loopback
	for _, c := range []struct {
		path string
		want int
	}{
		{"state", http.StatusUnauthorized},
		{"", http.StatusUnauthorized},
		{"events", http.StatusUnauthorized},
		{"state?token=" + token[:len(token)-1] + "x", http.StatusUnauthorized},
		{"state?token=" + token, http.StatusOK},
		{"?token=" + token, http.StatusOK},
	} {
		if got := get(t, base+c.path); got != c.want {
			t.Errorf("GET /%s: got %d, want %d", c.path, got, c.want)
		}
	}
}

func TestCloseEndsStreamsAndServer(t *testing.T) {
	s, err := Listen(Options{})
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(s.URL(), "/")
	st := openStream(t, s, url)
	s.Begin(&record.Run{}, time.Now(), 1)
	if err := s.Close(context.Background(), "", 0); err != nil {
		t.Fatal(err)
	}
	var last State
	for m := range st.msgs {
		last = m
	}
	if last.Status != StatusEnded {
		t.Errorf("the stream's last event: status %q, want %q", last.Status, StatusEnded)
	}
	if _, err := http.Get(url + "/state"); err == nil {
		t.Error("the server still answers once closed")
	}
}

func TestLingerKeepsServing(t *testing.T) {
	s, err := Listen(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	closed := make(chan error)
	go func() { closed <- s.Close(ctx, "", time.Hour) }()
	for {
		var st State
		resp, err := http.Get(s.URL() + "state")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if st.Status == StatusEnded {
			break // ended, and still answering
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // Ctrl-C ends the linger
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.URL() + "state"); err == nil {
		t.Error("the server still answers after its linger was cut")
	}
}

// Each load's verdict reaches the state as it is judged, once in the
// deltas, and the final verdict with the summary.
func TestVerdictsFormPointByPoint(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	s, _ := testServer(t, clk)
	s.Begin(&record.Run{}, clk.now(), 2)
	s.push()
	s.Verdict(slo.PointVerdict{Load: record.Load{Concurrency: 1}, Pass: true})
	s.Verdict(slo.PointVerdict{Load: record.Load{Concurrency: 8}, Shortfalls: []string{"ttft p95 1.6s > 1s"}})
	clk.add(time.Second)
	s.feed.mu.Lock()
	s.feed.tick()
	d := s.feed.state(false)
	s.feed.sent()
	again := s.feed.state(false)
	s.feed.mu.Unlock()
	if len(d.Verdicts) != 2 || !d.Verdicts[0].Pass || d.Verdicts[1].Pass || d.Verdicts[1].Label != "c=8" {
		t.Errorf("verdicts: got %+v, want c=1 passing, c=8 failing", d.Verdicts)
	}
	if len(again.Verdicts) != 0 {
		t.Errorf("the next delta repeats %d verdicts", len(again.Verdicts))
	}
	s.End(&metrics.Summary{}, &slo.Verdict{Conclusion: "not_met", Text: "does not hold at c=8"})
	s.feed.mu.Lock()
	full := s.feed.state(true)
	s.feed.mu.Unlock()
	if full.Verdict == nil || full.Verdict.Conclusion != "not_met" || len(full.Verdicts) != 2 {
		t.Errorf("final: verdict %+v with %d loads; want not_met with 2", full.Verdict, len(full.Verdicts))
	}
}
