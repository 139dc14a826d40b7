package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/servebench/servebench/internal/backend"
	"github.com/servebench/servebench/internal/launch"
	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sweep"
)

// readyPrompt is the first request's prompt: short, so that its time to
// first token is the server's cold start, not a prefill.
const readyPrompt = "Hello"

// ready waits until the server is ready, as docs/SWEEP.md defines it:
// its port accepts, its model list answers (with the model, when one is
// given), and one request returns a token; each stage's time is in the
// Startup, from the process's start. It fails when the process exits,
// when ReadyTimeout passes, or when ctx ends.
func (s Sweep) ready(ctx context.Context, p *launch.Process, port int, url string) (sweep.Startup, error) {
	var st sweep.Startup
	timeout := s.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	rctx, cancel := context.WithDeadline(ctx, p.Started.Add(timeout))
	defer cancel()
	go func() {
		select {
		case <-p.Exited():
			cancel()
		case <-rctx.Done():
		}
	}()
	since := func(t time.Time) *float64 { v := t.Sub(p.Started).Seconds(); return &v }
	stage := "its port to accept connections"
	fail := func(last error) (sweep.Startup, error) {
		select {
		case <-p.Exited():
			return st, fmt.Errorf("the server %s before it was ready (waiting for %s)", p.ExitText(), stage)
		default:
		}
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		msg := fmt.Sprintf("not ready after %v: waiting for %s", timeout, stage)
		if last != nil {
			msg += " (last: " + last.Error() + ")"
		}
		return st, errors.New(msg)
	}
	for !launch.Accepts(rctx, port) {
		if !sleep(rctx, readyPoll) {
			return fail(nil)
		}
	}
	st.PortOpenS = since(time.Now())

	stage = "its model list"
	opts := s.Server
	opts.URL = url
	t, err := backend.NewTarget(opts)
	if err != nil {
		return st, err
	}
	defer t.CloseIdleConnections()
	model, err := s.listed(rctx, t)
	if errors.As(err, new(refusal)) {
		return st, fmt.Errorf("not ready, and waiting would not change it: %w", err)
	}
	if err != nil {
		return fail(err)
	}
	st.ModelListedS = since(time.Now())

	stage = "a first token"
	c, err := backend.New(backend.Options{Target: t, API: s.apiOf(), Model: model, MaxConns: 1})
	if err != nil {
		return st, err // the request cannot be made: waiting would not help
	}
	defer c.CloseIdleConnections()
	rec, err := firstRequest(rctx, c)
	if errors.As(err, new(refusal)) {
		return st, fmt.Errorf("not ready, and waiting would not change it: %w", err)
	}
	if err != nil {
		return fail(err)
	}
	st.FirstTokenS = since(rec.firstToken)
	st.ReadyS = since(rec.end)
	ttft := rec.ttft.Seconds()
	st.ColdTTFTS = &ttft
	return st, nil
}

// refusalSettle is how long a server may go on refusing readiness's
// question (a model list without the model asked for, a 4xx to the first
// request) before the configuration fails: a server that answers has
// loaded what it serves, on every engine servebench knows.
var refusalSettle = 5 * time.Second // a variable for tests

// refusal is a server that answered readiness's question and said no,
// which waiting for --ready-timeout would not change.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// listed asks for the model list until it answers (Preflight), and
// returns the model to ask for. A server that refuses the credentials or
// the scheme, or that lists its models without the one asked for
// refusalSettle long, is a refusal.
func (s Sweep) listed(ctx context.Context, t *backend.Target) (string, error) {
	var lacking time.Time // when the list first answered without the model
	for {
		p, err := t.Preflight(ctx, s.apiOf(), s.Model)
		if err == nil {
			return p.Model, nil
		}
		if pe, ok := errors.AsType[*backend.PreflightError](err); ok {
			switch pe.Kind {
			case backend.PreflightAuth, backend.PreflightScheme, backend.PreflightTLS:
				return "", refusal{err}
			case backend.PreflightModel:
				if lacking.IsZero() {
					lacking = time.Now()
				} else if time.Since(lacking) >= refusalSettle {
					return "", refusal{err}
				}
			default:
				lacking = time.Time{}
			}
		}
		if !sleep(ctx, readyPoll) {
			return "", err
		}
	}
}

// answered is the first request that returned a token.
type answered struct {
	firstToken, end time.Time
	ttft            time.Duration // from the request's send
}

// firstRequest sends one short request until one returns a token: a
// server may list its model before it can serve it. A 4xx (but 408 and
// 429) for refusalSettle is a refusal: the request will not be accepted.
func firstRequest(ctx context.Context, c *backend.Client) (answered, error) {
	var refused time.Time // when the 4xxs began
	for {
		epoch := time.Now()
		var rec record.Record
		c.Do(ctx, epoch, &backend.Request{Prompt: readyPrompt, MaxTokens: 1}, &rec)
		if rec.OK() && rec.FirstTokenNS > 0 {
			return answered{firstToken: epoch.Add(time.Duration(rec.FirstTokenNS)), end: epoch.Add(time.Duration(rec.EndNS)),
				ttft: time.Duration(rec.FirstTokenNS - rec.SentNS)}, nil
		}
		err := errors.New("the request returned no token")
		if rec.Error != nil {
			err = fmt.Errorf("%s: %s", rec.Error.Class, rec.Error.Message)
		}
		switch {
		case rec.Error == nil || rec.Error.Class != record.ClassHTTP4xx || rec.Error.Status == http.StatusRequestTimeout:
			refused = time.Time{}
		case refused.IsZero():
			refused = time.Now()
		case time.Since(refused) >= refusalSettle:
			return answered{}, refusal{err}
		}
		if !sleep(ctx, readyPoll) {
			return answered{}, err
		}
	}
}

// sleep waits d, or less when ctx ends first (false then).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
