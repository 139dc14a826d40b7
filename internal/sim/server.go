package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Version is what /version and /api/version report.
const Version = "0.0.0-sim"

// maxBodyBytes bounds a request body.
const maxBodyBytes = 32 << 20

// Server is a running simulator. Create it with New, serve it with Start or
// mount Handler, and always Close it.
type Server struct {
	cfg     Config
	loop    *loop
	met     *metrics
	mux     http.Handler
	created int64 // Unix seconds, for response "created" fields
	nextID  atomic.Uint64

	mu   sync.Mutex
	hs   *http.Server
	once sync.Once
}

// ClockLost is the time the simulator skipped so far because its host ran
// it behind its schedule, in the time base a client measures (model time
// / time_scale): ClockLostMetric's value, read in process, so that a run
// knows it at every point's bounds whatever its telemetry sampled.
func (s *Server) ClockLost() time.Duration { return time.Duration(s.met.lostNS.Load()) }

// New validates cfg and starts the simulator's scheduler. It serves
// nothing until Start.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	met := newMetrics(cfg)
	s := &Server{cfg: cfg, met: met, loop: newLoop(cfg, met), created: time.Now().Unix()}
	s.routes()
	return s, nil
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background
// until ctx ends or Close is called. It returns the base URL, e.g.
// "http://127.0.0.1:41234".
func (s *Server) Start(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	hs := &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String()
	s.mu.Lock()
	s.hs = hs
	s.mu.Unlock()
	go func() { _ = hs.Serve(ln) }()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.loop.done:
		}
	}()
	return url, nil
}

// Close fails requests in flight, stops the scheduler and the listener.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		s.loop.close()
		s.mu.Lock()
		hs := s.hs
		s.mu.Unlock()
		if hs != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err = hs.Shutdown(ctx); err != nil {
				err = hs.Close()
			}
		}
	})
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.openAI(w, r, true) })
	m.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.openAI(w, r, false) })
	m.HandleFunc("GET /v1/models", s.models)
	m.HandleFunc("GET /version", s.version)
	m.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {})
	m.HandleFunc("POST /tokenize", s.tokenize)
	m.HandleFunc("POST /detokenize", s.detokenize)
	m.HandleFunc("POST /api/generate", func(w http.ResponseWriter, r *http.Request) { s.ollama(w, r, false) })
	m.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) { s.ollama(w, r, true) })
	m.HandleFunc("GET /api/version", s.version)
	m.HandleFunc("GET /api/tags", s.ollamaTags)
	m.HandleFunc("GET /api/ps", s.ollamaPS)
	m.HandleFunc("POST /completion", s.llamaCpp)
	m.HandleFunc("POST /generate", s.sglang)
	m.HandleFunc("GET /get_model_info", s.sglangModelInfo)
	m.HandleFunc("POST /generate_stream", s.tgi)
	m.Handle("GET /metrics", s.met.handler())
	scale := strconv.FormatFloat(s.cfg.TimeScale, 'g', -1, 64)
	s.mux = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(TimeScaleHeader, scale)
		m.ServeHTTP(w, r)
	})
}

// TimeScaleHeader is set on every response to the configured time_scale,
// so that a client measuring a sped-up simulator can report model time
// (servebench does); 1 means real time.
const TimeScaleHeader = "Servebench-Time-Scale"

// job is one generation request in flight, seen from its HTTP handler.
type job struct {
	srv     *Server
	id      uint64
	s       *seq
	g       genRequest
	text    *textGen
	emitted int
}

// answer serves a parsed request the same way for every API: a request
// already refused (aerr) or refused by the scheduler gets fail; a
// streamed one is handed to stream as soon as it starts; otherwise whole
// gets it once its n tokens are generated. An engine failure before then
// is a server error, unless the client has gone.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, g genRequest, aerr *apiError,
	fail func(http.ResponseWriter, *apiError), stream func(*job), whole func(j *job, n int)) {
	var j *job
	if aerr == nil {
		j, aerr = s.start(g)
	}
	if aerr != nil {
		fail(w, aerr)
		return
	}
	if g.stream {
		stream(j)
		return
	}
	n, err := j.wait(r.Context())
	if err != nil {
		if r.Context().Err() == nil {
			fail(w, serverError(err))
		}
		return
	}
	whole(j, n)
}

// stream writes a job's answer as it is generated, for every streaming
// API: buf at once (the headers with it), then each batch of new tokens as
// render appends them to the emptied buffer, until the job is done, when
// render also appends the ending. A client that stops reading aborts the
// job, freeing its slot.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, j *job, buf []byte,
	render func(buf []byte, avail int, done bool, err error) []byte) {
	rc := http.NewResponseController(w)
	for {
		if _, err := w.Write(buf); err != nil || rc.Flush() != nil {
			s.loop.abort(j.s)
			return
		}
		avail, done, err := j.next(r.Context())
		if err != nil && r.Context().Err() != nil {
			return
		}
		buf = render(buf[:0], avail, done, err)
		if done {
			_, _ = w.Write(buf)
			_ = rc.Flush()
			return
		}
	}
}

// start plans and submits a request.
func (s *Server) start(g genRequest) (*job, *apiError) {
	id := s.nextID.Add(1)
	seed, salt := s.cfg.Seed, id
	if g.seed != nil {
		seed, salt = *g.seed, 0 // a request's own seed fixes its text whatever the order
	}
	tg := newTextGen(seed, salt)
	target, reason, err := g.plan(s.cfg.EffectiveMaxModelLen(), tg, s.cfg.Engine.EOSMeanTokens)
	if err != nil {
		return nil, err
	}
	sq := &seq{id: id, prompt: g.prompt, target: target, reason: reason, box: newMailbox()}
	if s.cfg.Engine.EnablePrefixCaching && g.ids != nil {
		// Token ids that disagree with the count would cache the wrong
		// blocks: such a prompt is not cached.
		if ids := g.ids(); len(ids) == g.prompt {
			sq.hashes = blockHashes(ids, s.cfg.Engine.BlockSize)
		}
	}
	if e := s.loop.submit(sq); e != nil {
		return nil, &apiError{status: http.StatusServiceUnavailable, typ: "ServiceUnavailableError", msg: e.Error()}
	}
	return &job{srv: s, id: id, s: sq, g: g, text: tg}, nil
}

// next waits until there are tokens beyond those emitted or the request
// ends; it returns the tokens available. A cancelled ctx aborts the request.
func (j *job) next(ctx context.Context) (avail int, done bool, err error) {
	for {
		tokens, done, _, err := j.s.box.snapshot()
		if tokens > j.emitted || done {
			return tokens, done, err
		}
		select {
		case <-j.s.box.notify:
		case <-ctx.Done():
			j.srv.loop.abort(j.s)
			return j.emitted, true, ctx.Err()
		}
	}
}

// cached is the prompt tokens the engine found in its prefix cache, as
// the finished request's timing holds them.
func (j *job) cached() int {
	_, _, t, _ := j.s.box.snapshot()
	return t.Cached
}

// wait blocks until the request ends.
func (j *job) wait(ctx context.Context) (tokens int, err error) {
	for {
		n, done, err := j.next(ctx)
		if done {
			return n, err
		}
		j.emitted = n // nothing is streamed: just keep waiting
	}
}

// word returns the next output word.
func (j *job) word() string {
	w := j.text.word(j.emitted == 0)
	j.emitted++
	return w
}

// text generates the whole output of a finished non-streaming request.
func (j *job) fullText(n int) string {
	j.emitted = 0
	b := make([]byte, 0, n*6)
	for j.emitted < n {
		b = append(b, j.word()...)
	}
	return string(b)
}

func (j *job) timing() reqTiming {
	_, _, t, _ := j.s.box.snapshot()
	return t
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": Version})
}
