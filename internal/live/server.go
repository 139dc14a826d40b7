// Package live serves a run's live view while it goes: a page, a JSON
// state (GET /state) and server-sent events (GET /events), fed by the run
// through bench.Watcher without ever holding it up. docs/OUTPUT.md ("The
// live view") is the contract of the state and the events.
package live

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/rundir"
)

// PushEvery is how often updates are pushed, and the least time between
// two: a page that looks live, and a viewer that costs the run one small
// encode a second.
const PushEvery = time.Second

// DefaultAddr is where the view listens when no address is given: the
// loopback interface, on a port the system picks.
const DefaultAddr = "127.0.0.1:0"

// shutdownWait bounds how long closing waits for requests in flight.
const shutdownWait = 2 * time.Second

//go:embed page.html
var page []byte

// Options configure a Server.
type Options struct {
	// Addr is host:port to listen on; empty is DefaultAddr. A host that is
	// not loopback needs a token (Token, or one Listen makes).
	Addr string
	// Token, when set, is required of every request (?token=); Listen
	// makes one for an address that is not loopback.
	Token string
}

// Server is a live view: a bench.Watcher that serves what it is fed.
type Server struct {
	*feed
	token string
	ln    net.Listener
	srv   *http.Server
	url   string

	quit   chan struct{} // closed when the server closes: streams end
	closed sync.Once
	wg     sync.WaitGroup

	pmu      sync.Mutex // subscribers and pushes
	subs     map[*subscriber]bool
	lastPush time.Time
	seq      int
}

// subscriber is one open event stream: its next message, replaced when
// it has not taken the last one yet (stale: it then gets the whole state).
type subscriber struct {
	ch    chan []byte
	stale bool // under pmu
}

// Listen binds the view's address and serves it at once; the run is fed
// to it as a bench.Watcher, and Close ends it.
func Listen(o Options) (*Server, error) {
	addr := o.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	loop, err := Loopback(addr)
	if err != nil {
		return nil, err
	}
	token := o.Token
	if !loop && token == "" {
		if token, err = newToken(); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	s := newServer(token, time.Now)
	s.ln = ln
	s.url = "http://" + reachable(ln.Addr().(*net.TCPAddr)) + "/"
	if token != "" {
		s.url += "?token=" + token
	}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.wg.Go(func() { s.srv.Serve(ln) })
	s.wg.Go(func() { s.feed.collect(s.quit) })
	s.wg.Go(s.pushLoop)
	return s, nil
}

func newServer(token string, clock func() time.Time) *Server {
	return &Server{feed: newFeed(clock), token: token, quit: make(chan struct{}), subs: map[*subscriber]bool{}}
}

// Loopback says whether addr's host is a loopback interface: an IP of
// one, or "localhost". An empty host listens on every interface.
func Loopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:8089 or :8089): %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// loopbackHost says whether a Host header names a loopback host.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// reachable is the address a browser elsewhere reaches a listener at: a
// listener on every interface is reached by the machine's name.
func reachable(a *net.TCPAddr) string {
	if a.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			return net.JoinHostPort(h, strconv.Itoa(a.Port))
		}
	}
	return a.String()
}

func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the live view's token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// URL is the page's address, with its token when it needs one.
func (s *Server) URL() string { return s.url }

// Handler serves the page, /state, /events and, once written, the report.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /state", s.serveState)
	mux.HandleFunc("GET /events", s.serveEvents)
	mux.HandleFunc("GET /"+rundir.ReportFile, s.serveReport)
	return s.authorize(mux)
}

// authorize refuses a request without the token, when there is one;
// without one (a loopback view), a request that names another host than
// a loopback one: a page elsewhere whose name was made to point at this
// machine (DNS rebinding) cannot read the view.
func (s *Server) authorize(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.token != "" && subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("token")), []byte(s.token)) != 1 {
			http.Error(w, "this live view needs the token printed with its URL (?token=...)", http.StatusUnauthorized)
			return
		}
		if s.token == "" && !loopbackHost(r.Host) {
			http.Error(w, "this live view answers on its loopback address only", http.StatusForbidden)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src data:; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	w.Write(page)
}

func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	s.feed.mu.Lock()
	st := s.feed.state(true)
	st.Seq = s.seqNow()
	b, err := json.Marshal(st)
	s.feed.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

func (s *Server) seqNow() int {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	return s.seq
}

// serveEvents streams the updates: each push's delta, or the whole state
// to a stream new or fallen behind. Nothing is sent between pushes.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	sub := &subscriber{ch: make(chan []byte, 1), stale: true}
	s.pmu.Lock()
	s.subs[sub] = true
	s.pmu.Unlock()
	defer func() {
		s.pmu.Lock()
		delete(s.subs, sub)
		s.pmu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	for {
		select {
		case msg := <-sub.ch:
			if _, err := w.Write(msg); err != nil {
				return
			}
			fl.Flush()
		case <-r.Context().Done():
			return
		case <-s.quit:
			return
		}
	}
}

func (s *Server) serveReport(w http.ResponseWriter, r *http.Request) {
	s.feed.mu.Lock()
	path := s.feed.reportPath
	s.feed.mu.Unlock()
	if path == "" {
		http.NotFound(w, r)
		return
	}
	http.ServeFile(w, r, path)
}

// pushLoop pushes an update every PushEvery until the server closes.
func (s *Server) pushLoop() {
	t := time.NewTicker(PushEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.push()
		case <-s.quit:
			return
		}
	}
}

// push sends every stream the update since the last push: at most one
// per PushEvery, whoever asks (false when it is too soon).
func (s *Server) push() bool {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	now := s.feed.clock()
	if !s.lastPush.IsZero() && now.Sub(s.lastPush) < PushEvery {
		return false
	}
	s.lastPush = now
	s.seq++
	s.feed.mu.Lock()
	if s.feed.fresh {
		for sub := range s.subs {
			sub.stale = true
		}
		s.feed.fresh = false
	}
	s.feed.tick()
	delta := s.feed.state(false)
	var full State
	if s.anyStale() {
		full = s.feed.state(true)
	}
	s.feed.sent()
	s.feed.mu.Unlock()
	delta.Seq, full.Seq = s.seq, s.seq
	dmsg := message(delta)
	var fullMsg []byte
	for sub := range s.subs {
		select {
		case <-sub.ch: // not taken since the last push: it missed a delta
			sub.stale = true
		default:
		}
		msg := dmsg
		if sub.stale {
			if fullMsg == nil {
				fullMsg = message(full)
			}
			msg, sub.stale = fullMsg, false
		}
		sub.ch <- msg
	}
	return true
}

// anyStale: some stream needs the whole state; under pmu.
func (s *Server) anyStale() bool {
	for sub := range s.subs {
		if sub.stale || len(sub.ch) > 0 {
			return true
		}
	}
	return false
}

// message is one server-sent event of a state.
func message(st State) []byte {
	b, err := json.Marshal(st)
	if err != nil {
		b = []byte(`{"error":` + fmt.Sprintf("%q", err.Error()) + `}`)
	}
	return append(append([]byte("event: state\ndata: "), b...), "\n\n"...)
}

// Close ends the view: the state says the command ended and where its
// report is (report, a file, when written), one last update is pushed
// (PushEvery after the one before), and the server stays up for linger,
// or until ctx ends, before it closes.
func (s *Server) Close(ctx context.Context, report string, linger time.Duration) error {
	s.feed.mu.Lock()
	s.feed.status = StatusEnded
	if report != "" {
		if _, err := os.Stat(report); err == nil {
			s.feed.reportPath, s.feed.report = report, rundir.ReportFile
		}
	}
	s.feed.event(EventRun, "the run has ended")
	s.feed.mu.Unlock()
	// Nobody is streaming: /state has the end already, and the command
	// need not wait for the next push.
	for s.streams() > 0 && !s.push() {
		s.pmu.Lock()
		wait := PushEvery - s.feed.clock().Sub(s.lastPush)
		s.pmu.Unlock()
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	// the last update reaches the streams before they close
	s.flushSubs(ctx)
	if linger > 0 {
		select {
		case <-time.After(linger):
		case <-ctx.Done():
		}
	}
	return s.shutdown()
}

// streams counts the open event streams.
func (s *Server) streams() int {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	return len(s.subs)
}

// flushSubs waits, briefly, for every stream to take its last message.
func (s *Server) flushSubs(ctx context.Context) {
	deadline := time.Now().Add(shutdownWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s.pmu.Lock()
		pending := 0
		for sub := range s.subs {
			pending += len(sub.ch)
		}
		s.pmu.Unlock()
		if pending == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shutdown closes the streams and the listener, and waits for them.
func (s *Server) shutdown() error {
	var err error
	s.closed.Do(func() {
		close(s.quit)
		if s.srv == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
		defer cancel()
		if err = s.srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
			err = s.srv.Close()
		}
		s.wg.Wait()
	})
	return err
}
