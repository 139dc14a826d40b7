// Package store owns servebench's run history: a SQLite database (through
// the pure-Go modernc.org/sqlite driver, so that servebench stays one static
// binary) holding one row per run with its context, labels and per-point
// summaries and verdicts. Run directories stay the source of truth: the
// history is an index that `history import` can rebuild from them. It
// returns values; rendering them is report's.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// FileName is the database's name inside servebench's data directory.
const FileName = "history.db"

// DefaultBusyTimeout is how long a writer waits for another servebench
// process holding the database: long enough for any insert (milliseconds)
// to finish, short enough that a stuck process is reported, not waited on.
const DefaultBusyTimeout = 10 * time.Second

// DB is an open history database.
type DB struct {
	db   *sql.DB
	path string
	// schema is the version of a file opened read-only below
	// SchemaVersion, which it reads as it stands; 0 for the current one.
	schema int
}

// Options tune Open; the zero value is ready to use.
type Options struct {
	// BusyTimeout is how long to wait for a lock (DefaultBusyTimeout when 0).
	BusyTimeout time.Duration
	// MustExist refuses a missing file instead of creating one (for
	// commands that only read).
	MustExist bool
	// ReadOnly opens for reading only: no write access is needed to the
	// file or its directory (a read-only mount, another user's history),
	// and nothing is changed. Put fails on such a database.
	ReadOnly bool
}

// DefaultPath is where the history lives when no --db is given:
// $XDG_DATA_HOME/servebench/history.db, else the OS's per-user data
// directory (~/.local/share on Linux and the BSDs, ~/Library/Application
// Support on macOS, %LocalAppData% on Windows). getenv reads the
// environment, so that tests can supply theirs.
func DefaultPath(goos string, getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "servebench", FileName), nil
	}
	home := getenv("HOME")
	var dir string
	switch goos {
	case "windows":
		dir = getenv("LocalAppData")
	case "darwin", "ios":
		if home != "" {
			dir = filepath.Join(home, "Library", "Application Support")
		}
	case "plan9":
		if h := getenv("home"); h != "" {
			dir = filepath.Join(h, "lib")
		}
	default:
		if home != "" {
			dir = filepath.Join(home, ".local", "share")
		}
	}
	if dir == "" {
		return "", errors.New("no data directory: neither $XDG_DATA_HOME nor $HOME is set")
	}
	return filepath.Join(dir, "servebench", FileName), nil
}

// Open opens (creating when absent, unless MustExist) the history at path
// and checks its schema version: a database written by a newer servebench
// is refused with ErrNewer, never rewritten.
func Open(ctx context.Context, path string, o Options) (*DB, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("history database %s: the path must not contain '?' or '#'", path)
	}
	if o.MustExist {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("history database %s: %w", path, err)
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("history database %s: %w", path, err)
	}
	busy := o.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	// Immediate transactions take the write lock first, so two writers
	// queue on busy_timeout instead of failing on a lock upgrade. (WAL is
	// set by migrate, once the file is known to be ours.)
	if o.ReadOnly {
		return openReadOnly(ctx, path, busy)
	}
	dsn := fmt.Sprintf("%s?_busy_timeout=%d&_txlock=immediate&_foreign_keys=1", path, busy.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("history database %s: %w", path, err)
	}
	s := &DB{db: db, path: path}
	if err := retryLocked(ctx, busy, func() error { return s.migrate(ctx) }); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openReadOnly opens the history at path for reading. SQLite's read-only
// mode still writes the WAL's index beside the file; where the directory
// cannot be written either (a read-only mount), the file is opened as
// immutable, which reads it as it stands.
func openReadOnly(ctx context.Context, path string, busy time.Duration) (*DB, error) {
	uri := "file:" + strings.ReplaceAll(path, "%", "%25") + fmt.Sprintf("?_busy_timeout=%d&_foreign_keys=1", busy.Milliseconds())
	var err error
	for _, mode := range []string{"&mode=ro", "&mode=ro&immutable=1"} {
		var db *sql.DB
		if db, err = sql.Open("sqlite", uri+mode); err != nil {
			return nil, fmt.Errorf("history database %s: %w", path, err)
		}
		s := &DB{db: db, path: path}
		var v int
		if v, err = s.check(ctx, db); err == nil && v != SchemaVersion && v != 0 {
			s.schema = v // older: read as it stands, upgraded by the next write where it can be written
		}
		if err == nil {
			return s, nil
		}
		db.Close()
		if !errors.Is(err, errCannotOpen) {
			return nil, err
		}
	}
	return nil, err
}

// retryLocked runs f again while it finds the database locked, up to
// timeout. SQLite answers some locks without waiting on busy_timeout: a
// second process turning on WAL, or reading the file while the first
// sets it up, is told "busy" at once.
func retryLocked(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if !errors.Is(err, ErrLocked) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Path is the database's file.
func (s *DB) Path() string { return s.path }

// Close closes the database.
func (s *DB) Close() error { return s.db.Close() }

// Errors a caller can tell apart (errors.Is); each wrapping error names the
// file and what to do.
var (
	ErrNewer    = errors.New("written by a newer servebench")
	ErrLocked   = errors.New("locked by another process")
	ErrCorrupt  = errors.New("not a servebench history database, or damaged")
	ErrNotFound = errors.New("no such run")
	// errCannotOpen: the file or what SQLite keeps beside it cannot be
	// opened or written (permissions, a read-only mount).
	errCannotOpen = errors.New("cannot be opened or written")
)

// wrap turns a driver error into one that names the database and says
// what to do; a lock held past the busy timeout is ErrLocked, an
// unreadable file ErrCorrupt.
func (s *DB) wrap(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("history database %s is %w (%v); wait for it to finish, or use --db for another file", s.path, ErrLocked, err)
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("history database %s is %w (%v); move it aside and rebuild it with servebench history import DIR…", s.path, ErrCorrupt, err)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY:
			return fmt.Errorf("history database %s: %w (%v)", s.path, errCannotOpen, err)
		}
	}
	return fmt.Errorf("history database %s: %w", s.path, err)
}
