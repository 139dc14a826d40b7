package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/servebench/servebench/internal/record"
)

// Put stores e and returns its id. A run already stored (the same start,
// target and seed, in whichever directory) is replaced in place and keeps
// its id, so that importing a directory twice stores it once; replaced
// says so.
func (s *DB) Put(ctx context.Context, e *Entry) (id int64, replaced bool, err error) {
	if err := e.check(); err != nil {
		return 0, false, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, s.wrap(err)
	}
	defer tx.Rollback()
	if id, replaced, err = s.putRun(ctx, tx, e); err != nil {
		return 0, false, err
	}
	if err := s.putLabels(ctx, tx, id, e); err != nil {
		return 0, false, err
	}
	if err := s.putPoints(ctx, tx, id, e); err != nil {
		return 0, false, err
	}
	return id, replaced, s.wrap(tx.Commit())
}

// runColumns are the runs table's columns Put writes, in putRun's order.
const runColumns = `run_key, run_dir, started, started_ns, ended, stored, tool_version, target_url, api, model, simulated,
	server_model_id, runtime, runtime_version, max_context, quantization, gpu, gpu_count, gpu_driver,
	workload, workload_hash, objective, objective_hash, objective_name, holds, verdict_text,
	flags, interrupted, run_json, conclusion`

func (s *DB) putRun(ctx context.Context, tx *sql.Tx, e *Entry) (int64, bool, error) {
	w, wHash, err := e.workload()
	if err != nil {
		return 0, false, err
	}
	obj, oHash, oName, err := e.objective()
	if err != nil {
		return 0, false, err
	}
	runJSON, err := json.Marshal(e.Run)
	if err != nil {
		return 0, false, err
	}
	flags, _ := json.Marshal(append([]string{}, e.Run.Args...))
	started, err := time.Parse(time.RFC3339Nano, e.Run.Started)
	if err != nil {
		return 0, false, fmt.Errorf("run.json: started: %w", err)
	}
	gpu, gpus, driver := e.gpus()
	srv, t := e.Run.Target.Server, e.Run.Target
	var holds, verdict, conclusion any
	if e.Verdict != nil {
		holds, verdict, conclusion = e.Verdict.Holds, e.Verdict.Text, null(e.Verdict.Conclusion)
	}
	args := []any{e.key(), null(e.Dir), e.Run.Started, started.UnixNano(), null(e.Run.Ended), time.Now().UTC().Format(time.RFC3339Nano),
		e.Run.Version, t.URL, t.API, t.Model, t.Simulated,
		null(srv[record.ServerModelID]), null(srv[record.ServerRuntime]), null(srv[record.ServerRuntimeVersion]), nullInt(e.maxContext()),
		null(e.labels(gpu)["quantization"]), null(gpu), nullInt(gpus), null(driver),
		w, wHash, null(obj), null(oHash), null(oName), holds, verdict,
		string(flags), e.Run.Interrupted, string(runJSON), conclusion}
	var id int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM runs WHERE run_key = ?`, e.key()).Scan(&id)
	switch {
	case err == sql.ErrNoRows:
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (`+runColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
		if err != nil {
			return 0, false, s.wrap(err)
		}
		id, err = res.LastInsertId()
		return id, false, s.wrap(err)
	case err != nil:
		return 0, false, s.wrap(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id); err != nil { // its labels and points go with it
		return 0, false, s.wrap(err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO runs (id, `+runColumns+`) VALUES (?, `+placeholders(len(args))+`)`, append([]any{id}, args...)...)
	return id, true, s.wrap(err)
}

func (s *DB) putLabels(ctx context.Context, tx *sql.Tx, id int64, e *Entry) error {
	gpu, _, _ := e.gpus()
	for k, v := range e.labels(gpu) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO labels (run_id, key, value) VALUES (?, ?, ?)`, id, k, v); err != nil {
			return s.wrap(err)
		}
	}
	return nil
}

func (s *DB) putPoints(ctx context.Context, tx *sql.Tx, id int64, e *Entry) error {
	for i := range e.Points {
		p := &e.Points[i]
		summary, err := json.Marshal(p)
		if err != nil {
			return err
		}
		var pass, verdict any
		if v := e.pointVerdict(p); v != nil {
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			pass, verdict = v.Pass, string(b)
		}
		l := p.Load
		args := []any{id, p.Index, l.Workload, nullInt(l.Concurrency), nullFloat(l.Rate), nullInt(l.MaxConcurrency), l.Label(),
			p.Requests.Completed, p.Requests.Failed, p.ErrorRate, p.OutputTPS}
		for _, ps := range pointStats {
			args = append(args, ps.value(p))
		}
		args = append(args, pass, string(summary), verdict)
		_, err = tx.ExecContext(ctx, `INSERT INTO points (run_id, idx, workload, concurrency, rate, max_concurrency, load,
			completed, failed, error_rate, output_tps, `+pointStatColumns()+`,
			pass, summary, verdict) VALUES (`+placeholders(len(args))+`)`, args...)
		if err != nil {
			return s.wrap(err)
		}
	}
	return nil
}

func placeholders(n int) string {
	b := make([]byte, 0, 2*n)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '?')
	}
	return string(b)
}

// null, nullInt and nullFloat store an absent value as NULL, not as "" or 0.
func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func nullFloat(f float64) any {
	if f == 0 {
		return nil
	}
	return f
}
