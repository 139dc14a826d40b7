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
const SchemaVersion = 2

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
	// 1 → 2: the verdict's conclusion (holds, not_met, inconclusive): an
	// inconclusive run does not hold, nor is it a run that failed.
	`ALTER TABLE runs ADD COLUMN conclusion TEXT;`,
}

// migrate brings the database to SchemaVersion in one transaction, which
// holds the write lock, so two processes opening a new file at once create
// its tables once.
func (s *DB) migrate(ctx context.Context) error {
	v, err := s.check(ctx, s.db)
	if err != nil || v == SchemaVersion {
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
	if v, err = s.check(ctx, tx); err != nil { // again, under the lock: another process may have been first
		return err
	}
	for i := v; i < SchemaVersion; i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return s.wrap(err)
		}
	}
	if _, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return s.wrap(err)
	}
	return s.wrap(tx.Commit())
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// check returns the database's schema version, refusing a newer one and
// a file at version 0 that holds tables: another program's database, which
// servebench must not add its tables to. Version and tables are read in
// one statement, so that another process creating the tables in between
// cannot make ours look foreign.
func (s *DB) check(ctx context.Context, q queryer) (int, error) {
	var v, n int
	err := q.QueryRowContext(ctx, `SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)`).Scan(&v, &n)
	switch {
	case err != nil:
		return 0, s.wrap(err)
	case v > SchemaVersion:
		return 0, s.newer(v)
	case v == 0 && n > 0:
		return 0, fmt.Errorf("history database %s is %w: it holds tables servebench did not create; use --db for another file", s.path, ErrCorrupt)
	}
	return v, nil
}

func (s *DB) newer(v int) error {
	return fmt.Errorf("history database %s was %w (schema %d; this one knows up to %d): nothing was changed; upgrade servebench, or use --db for another file",
		s.path, ErrNewer, v, SchemaVersion)
}
