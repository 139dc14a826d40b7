package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/slo"
)

// Run is a stored run as `history` lists it (docs/OUTPUT.md, History).
type Run struct {
	ID            int64             `json:"id"`
	Started       string            `json:"started"`
	Ended         string            `json:"ended,omitempty"`
	Stored        string            `json:"stored"`
	Dir           string            `json:"dir,omitempty"`
	ToolVersion   string            `json:"tool_version"`
	Target        string            `json:"target"`
	API           string            `json:"api"`
	Model         string            `json:"model"`
	Simulated     bool              `json:"simulated"`
	Server        Server            `json:"server"`
	Quantization  string            `json:"quantization,omitempty"`
	GPU           string            `json:"gpu,omitempty"`
	GPUCount      int               `json:"gpu_count,omitempty"`
	GPUDriver     string            `json:"gpu_driver,omitempty"`
	Labels        map[string]string `json:"labels"`
	WorkloadHash  string            `json:"workload_hash"`
	ObjectiveName string            `json:"objective_name,omitempty"`
	ObjectiveHash string            `json:"objective_hash,omitempty"`
	// Holds is the objective's verdict, null without an objective;
	// Conclusion says it in a word: holds, not_met or inconclusive
	// (slo.Verdict.Conclusion), empty without an objective.
	Holds       *bool    `json:"holds"`
	Conclusion  string   `json:"conclusion,omitempty"`
	Verdict     string   `json:"verdict,omitempty"`
	Interrupted bool     `json:"interrupted"`
	Flags       []string `json:"flags"`
	Points      []Point  `json:"points"`
}

// Server is what the server said about itself.
type Server struct {
	ModelID        string `json:"model_id,omitempty"`
	Runtime        string `json:"runtime,omitempty"`
	RuntimeVersion string `json:"runtime_version,omitempty"`
	MaxContext     int    `json:"max_context,omitempty"`
}

// Point is a stored load point: its headline figures, and in Detail its
// whole summary and verdict.
type Point struct {
	Index     int         `json:"index"`
	Load      record.Load `json:"load"`
	Label     string      `json:"label"`
	Completed int         `json:"completed"`
	Failed    int         `json:"failed"`
	ErrorRate float64     `json:"error_rate"`
	OutputTPS float64     `json:"output_tps"`
	// The statistics metrics.Table keeps in the history (History), each
	// named as the CSV names it; null when nothing was measured.
	TTFTP50MS *float64 `json:"ttft_ms_p50"`
	TTFTP95MS *float64 `json:"ttft_ms_p95"`
	ITLP95MS  *float64 `json:"itl_ms_p95"`
	E2EP95MS  *float64 `json:"e2e_ms_p95"`
	SpeedP50  *float64 `json:"decode_tps_per_request_p50"`
	// Pass is the point's load verdict, null without an objective.
	Pass    *bool           `json:"pass"`
	Summary json.RawMessage `json:"summary,omitempty"`
	Verdict json.RawMessage `json:"verdict,omitempty"`
}

// Detail is one run in full, as `history show` prints it.
type Detail struct {
	Run
	Workload  json.RawMessage `json:"workload"`
	Objective json.RawMessage `json:"objective,omitempty"`
	RunJSON   json.RawMessage `json:"run"`
}

// Filter selects runs; its zero value selects every run.
type Filter struct {
	Target string            // part of the target URL
	Model  string            // part of the model name or the server's model id
	Labels map[string]string // each label must have this value
	Since  time.Time         // started at or after (zero: no bound)
	Until  time.Time         // started before (zero: no bound)
	Limit  int               // the newest this many (0: all)
}

const selectRuns = `SELECT id, started, coalesce(ended, ''), stored, coalesce(run_dir, ''), tool_version,
	target_url, api, model, simulated, coalesce(server_model_id, ''), coalesce(runtime, ''),
	coalesce(runtime_version, ''), coalesce(max_context, 0), coalesce(quantization, ''), coalesce(gpu, ''),
	coalesce(gpu_count, 0), coalesce(gpu_driver, ''), workload_hash, coalesce(objective_name, ''),
	coalesce(objective_hash, ''), holds, coalesce(verdict_text, ''), interrupted, flags, coalesce(conclusion, '') FROM runs`

// selectRuns is selectRuns for s's schema: a schema-1 file opened
// read-only has no conclusion, which scanRun derives from holds.
func (s *DB) selectRuns() string {
	if s.schema == 1 {
		return strings.Replace(selectRuns, "coalesce(conclusion, '')", "''", 1)
	}
	return selectRuns
}

// where is f as an SQL condition and its arguments.
func (f Filter) where() (string, []any) {
	conds, args := []string{"1"}, []any{}
	if f.Target != "" {
		conds = append(conds, "instr(lower(target_url), lower(?)) > 0")
		args = append(args, f.Target)
	}
	if f.Model != "" {
		conds = append(conds, "(instr(lower(model), lower(?)) > 0 OR instr(lower(coalesce(server_model_id, '')), lower(?)) > 0)")
		args = append(args, f.Model, f.Model)
	}
	for k, v := range f.Labels {
		conds = append(conds, "EXISTS (SELECT 1 FROM labels l WHERE l.run_id = runs.id AND l.key = ? AND l.value = ?)")
		args = append(args, k, v)
	}
	if !f.Since.IsZero() {
		conds = append(conds, "started_ns >= ?")
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "started_ns < ?")
		args = append(args, f.Until.UnixNano())
	}
	return strings.Join(conds, " AND "), args
}

// List returns the runs f selects, newest first, with their points.
func (s *DB) List(ctx context.Context, f Filter) ([]Run, error) {
	cond, args := f.where()
	query := s.selectRuns() + " WHERE " + cond + " ORDER BY started_ns DESC, id DESC"
	if f.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	runs := []Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, s.wrap(err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(err)
	}
	rows.Close()
	for i := range runs {
		if err := s.fill(ctx, &runs[i], false); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var holds sql.NullBool
	var flags string
	err := sc.Scan(&r.ID, &r.Started, &r.Ended, &r.Stored, &r.Dir, &r.ToolVersion, &r.Target, &r.API, &r.Model,
		&r.Simulated, &r.Server.ModelID, &r.Server.Runtime, &r.Server.RuntimeVersion, &r.Server.MaxContext,
		&r.Quantization, &r.GPU, &r.GPUCount, &r.GPUDriver, &r.WorkloadHash, &r.ObjectiveName, &r.ObjectiveHash,
		&holds, &r.Verdict, &r.Interrupted, &flags, &r.Conclusion)
	if err != nil {
		return r, err
	}
	if holds.Valid {
		r.Holds = &holds.Bool
		if r.Conclusion == "" { // stored before conclusions were
			r.Conclusion = map[bool]string{true: slo.ConclusionHolds, false: slo.ConclusionNotMet}[holds.Bool]
		}
	}
	return r, json.Unmarshal([]byte(flags), &r.Flags)
}

// Get returns run id in full, or an error wrapping ErrNotFound.
func (s *DB) Get(ctx context.Context, id int64) (*Detail, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, s.selectRuns()+" WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, s.notFound(id)
	}
	if err != nil {
		return nil, s.wrap(err)
	}
	d := &Detail{Run: r}
	if err := s.fill(ctx, &d.Run, true); err != nil {
		return nil, err
	}
	var w, obj, run string
	err = s.db.QueryRowContext(ctx, `SELECT workload, coalesce(objective, ''), run_json FROM runs WHERE id = ?`, id).Scan(&w, &obj, &run)
	if err != nil {
		return nil, s.wrap(err)
	}
	d.Workload, d.RunJSON = json.RawMessage(w), json.RawMessage(run)
	if obj != "" {
		d.Objective = json.RawMessage(obj)
	}
	return d, nil
}

// Dir is the directory run id was written to: what `compare` and other
// commands read when given a history id. It is "" for a run made without
// --out; an unknown id is an error wrapping ErrNotFound.
func (s *DB) Dir(ctx context.Context, id int64) (string, error) {
	var dir sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT run_dir FROM runs WHERE id = ?`, id).Scan(&dir)
	if errors.Is(err, sql.ErrNoRows) {
		return "", s.notFound(id)
	}
	return dir.String, s.wrap(err)
}

func (s *DB) notFound(id int64) error {
	return fmt.Errorf("%w %d in history database %s (servebench history lists the stored runs)", ErrNotFound, id, s.path)
}

// fill reads r's labels and points; full adds each point's summary and
// verdict.
func (s *DB) fill(ctx context.Context, r *Run, full bool) error {
	r.Labels = map[string]string{}
	rows, err := s.db.QueryContext(ctx, `SELECT key, value FROM labels WHERE run_id = ?`, r.ID)
	if err != nil {
		return s.wrap(err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return s.wrap(err)
		}
		r.Labels[k] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.wrap(err)
	}
	r.Points, err = s.points(ctx, r.ID, full)
	return err
}

func (s *DB) points(ctx context.Context, id int64, full bool) ([]Point, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT idx, workload, coalesce(concurrency, 0), coalesce(rate, 0),
		coalesce(max_concurrency, 0), load, completed, failed, error_rate, output_tps, `+pointStatColumns()+`,
		pass, summary, coalesce(verdict, '') FROM points WHERE run_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	ps := []Point{}
	for rows.Next() {
		var p Point
		var pass sql.NullBool
		var summary, verdict string
		f := make([]sql.NullFloat64, len(pointStats))
		dest := []any{&p.Index, &p.Load.Workload, &p.Load.Concurrency, &p.Load.Rate, &p.Load.MaxConcurrency,
			&p.Label, &p.Completed, &p.Failed, &p.ErrorRate, &p.OutputTPS}
		for i := range f {
			dest = append(dest, &f[i])
		}
		if err := rows.Scan(append(dest, &pass, &summary, &verdict)...); err != nil {
			return nil, s.wrap(err)
		}
		pv := reflect.ValueOf(&p).Elem()
		for i, ps := range pointStats {
			pv.Field(ps.field).Set(reflect.ValueOf(opt(f[i])))
		}
		if pass.Valid {
			p.Pass = &pass.Bool
		}
		if full {
			p.Summary = json.RawMessage(summary)
			if verdict != "" {
				p.Verdict = json.RawMessage(verdict)
			}
		}
		ps = append(ps, p)
	}
	return ps, s.wrap(rows.Err())
}

func opt(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
}
