package store

import (
	"context"
	"database/sql"
	"fmt"
)

// SchemaVersion is the schema this servebench writes, kept in SQLite's
// user_version. migrations[i] takes a database from version i to i+1; a
// database whose version is higher was written by a newer servebench and
// is refused, so that nothing it stored is rewritten by code that does not
// know it.
const SchemaVersion = 1

var migrations = []string{
	// 0 → 1: runs, their labels and their load points (docs/OUTPUT.md,
	// History database).
	`CREATE TABLE runs (
		id              INTEGER PRIMARY KEY AUTOINCREMENT,
		run_key         TEXT NOT NULL UNIQUE,
		run_dir         TEXT,
		started         TEXT NOT NULL,
		started_ns      INTEGER NOT NULL,
		ended           TEXT,
		stored          TEXT NOT NULL,
		tool_version    TEXT NOT NULL,
		target_url      TEXT NOT NULL,
		api             TEXT NOT NULL,
		model           TEXT NOT NULL,
		simulated       INTEGER NOT NULL,
		server_model_id TEXT,
		runtime         TEXT,
		runtime_version TEXT,
		max_context     INTEGER,
		quantization    TEXT,
		gpu             TEXT,
		gpu_count       INTEGER,
		gpu_driver      TEXT,
		workload        TEXT NOT NULL,
		workload_hash   TEXT NOT NULL,
		objective       TEXT,
		objective_hash  TEXT,
		objective_name  TEXT,
		holds           INTEGER,
		verdict_text    TEXT,
		flags           TEXT NOT NULL,
		interrupted     INTEGER NOT NULL,
		run_json        TEXT NOT NULL
	);
	CREATE INDEX runs_started ON runs (started_ns);
	CREATE TABLE labels (
		run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
		key    TEXT NOT NULL,
		value  TEXT NOT NULL,
		PRIMARY KEY (run_id, key)
	);
	CREATE TABLE points (
		run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
		idx             INTEGER NOT NULL,
		workload        TEXT NOT NULL,
		concurrency     INTEGER,
		rate            REAL,
		max_concurrency INTEGER,
		load            TEXT NOT NULL,
		completed       INTEGER NOT NULL,
		failed          INTEGER NOT NULL,
		error_rate      REAL NOT NULL,
		output_tps      REAL NOT NULL,
		ttft_p50_ms     REAL,
		ttft_p95_ms     REAL,
		itl_p95_ms      REAL,
		e2e_p95_ms      REAL,
		speed_p50       REAL,
		pass            INTEGER,
		summary         TEXT NOT NULL,
		verdict         TEXT,
		PRIMARY KEY (run_id, idx)
	);`,
}

// migrate brings the database to SchemaVersion in one transaction, which
// holds the write lock, so two processes opening a new file at once create
// its tables once.
func (s *DB) migrate(ctx context.Context) error {
	v, err := s.version(ctx, s.db)
	if err != nil {
		return s.wrap(err)
	}
	if v > SchemaVersion {
		return s.newer(v)
	}
	if v == SchemaVersion {
		return nil
	}
	if err := s.ours(ctx, s.db, v); err != nil {
		return err
	}
	// WAL lets readers go on while a writer writes; the setting is kept in
	// the file, so it is made once, before the first tables.
	if _, err := s.db.ExecContext(ctx, `PRAGMA journal_mode = WAL`); err != nil {
		return s.wrap(err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback()
	if err := s.migrateTx(ctx, tx); err != nil {
		return err
	}
	return s.wrap(tx.Commit())
}

func (s *DB) migrateTx(ctx context.Context, tx *sql.Tx) error {
	v, err := s.version(ctx, tx) // again, under the lock: another process may have been first
	if err != nil {
		return s.wrap(err)
	}
	if v > SchemaVersion {
		return s.newer(v)
	}
	if err := s.ours(ctx, tx, v); err != nil {
		return err
	}
	for i := v; i < SchemaVersion; i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return s.wrap(err)
		}
	}
	_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion))
	return s.wrap(err)
}

// ours refuses a file at version 0 that holds tables: another program's
// database, which servebench must not add its tables to.
func (s *DB) ours(ctx context.Context, q queryer, v int) error {
	if v != 0 {
		return nil
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		return s.wrap(err)
	}
	if n > 0 {
		return fmt.Errorf("history database %s is %w: it holds tables servebench did not create; use --db for another file", s.path, ErrCorrupt)
	}
	return nil
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *DB) version(ctx context.Context, q queryer) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	return v, err
}

func (s *DB) newer(v int) error {
	return fmt.Errorf("history database %s was %w (schema %d; this one knows up to %d): nothing was changed; upgrade servebench, or use --db for another file",
		s.path, ErrNewer, v, SchemaVersion)
}
