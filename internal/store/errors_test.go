package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/slo"
)

// A database written by a newer servebench is refused with a message that
// says so, and its file is left byte for byte as it was.
func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	db := open(t, path)
	put(t, db, testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m"))
	if _, err := db.db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	_, err := Open(context.Background(), path, Options{})
	if !errors.Is(err, ErrNewer) || !strings.Contains(err.Error(), "schema 99") || !strings.Contains(err.Error(), path) {
		t.Fatalf("newer database: %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("opening a newer database changed its file")
	}
}

// An older database is brought to the current schema once; a current one
// is left alone.
func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	db := open(t, path)
	v, err := db.check(context.Background(), db.db)
	if err != nil || v != SchemaVersion {
		t.Fatalf("a new database has version %d (%v), want %d", v, err, SchemaVersion)
	}
	db.Close()
	db = open(t, path) // a second open must not run the migrations again
	if v, _ := db.check(context.Background(), db.db); v != SchemaVersion {
		t.Fatalf("reopened: version %d", v)
	}
}

// Files that are not a history database are refused with ErrCorrupt, and
// the message says how to rebuild; none is rewritten.
func TestCorruptRefused(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("not sqlite "), 1000), 0o644)
	foreign := filepath.Join(dir, "foreign.db")
	fdb, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fdb.Exec(`CREATE TABLE accounts (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	fdb.Close()
	damaged := filepath.Join(dir, "damaged.db")
	db := open(t, damaged)
	for i := range 50 {
		put(t, db, testEntry(time.Date(2026, 12, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339Nano), "builtin:sim", "m"))
	}
	db.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	db.Close()
	b, _ := os.ReadFile(damaged)
	for i := 4096; i < len(b); i++ { // every page after the first
		b[i] ^= 0x5a
	}
	os.WriteFile(damaged, b, 0o644)
	for path, advice := range map[string]string{garbage: "history import", foreign: "--db", damaged: "history import"} {
		before, _ := os.ReadFile(path)
		db, err := Open(context.Background(), path, Options{})
		if err == nil {
			_, err = db.List(context.Background(), Filter{})
			db.Close()
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), advice) {
			t.Errorf("%s: %v, want ErrCorrupt saying %q", filepath.Base(path), err, advice)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("%s was changed", filepath.Base(path))
		}
	}
}

// A writer that holds the database past the busy timeout gives ErrLocked,
// naming the file, instead of hanging or failing silently.
func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	holder := open(t, path)
	tx, err := holder.db.Begin() // immediate: takes the write lock now
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	db, err := Open(context.Background(), path, Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, _, err = db.Put(context.Background(), testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m"))
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("put while locked: %v, want ErrLocked naming the file", err)
	}
	tx.Rollback()
	if _, _, err := db.Put(context.Background(), testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m")); err != nil {
		t.Fatalf("put after the lock was released: %v", err)
	}
}

// A command that only reads does not create a database.
func TestMustExist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none", "h.db")
	if _, err := Open(context.Background(), path, Options{MustExist: true}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Error("a read created the directory")
	}
}

// A read-only open lists what is stored and changes nothing: Put fails,
// and the stored runs are still there, alone.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Put(ctx, testEntry("2026-12-01T07:00:00Z", "builtin:sim", "m")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := Open(ctx, path, Options{MustExist: true, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	defer ro.Close()
	if _, _, err := ro.Put(ctx, testEntry("2026-12-02T07:00:00Z", "builtin:sim", "m")); err == nil {
		t.Error("a read-only database stored a run")
	}
	runs, err := ro.List(ctx, Filter{})
	if err != nil || len(runs) != 1 {
		t.Errorf("read-only list: %d runs, %v; want the 1 stored", len(runs), err)
	}
}

// A schema-1 database (before runs.conclusion) is migrated: the column is
// added, a run stored before reads its conclusion from holds, and a new
// run stores its own.
func TestMigrateConclusion(t *testing.T) {
	path, id := schemaOne(t)
	db := open(t, path)
	if v, _ := db.check(context.Background(), db.db); v != SchemaVersion {
		t.Fatalf("version %d after migrating, want %d", v, SchemaVersion)
	}
	e := testEntry("2026-12-02T07:00:00Z", "http://127.0.0.1:8000", "llama")
	e.Verdict = &slo.Verdict{Inconclusive: true, Conclusion: slo.ConclusionInconclusive}
	id2 := put(t, db, e)
	for _, c := range []struct {
		id   int64
		want string
	}{{id, slo.ConclusionHolds}, {id2, slo.ConclusionInconclusive}} {
		d, err := db.Get(context.Background(), c.id)
		if err != nil || d.Conclusion != c.want {
			t.Errorf("run %d: conclusion %q (%v), want %q", c.id, d.Conclusion, err, c.want)
		}
	}
}

// A schema-1 history that cannot be written (opened read-only) is read as
// it stands: its runs are listed, their conclusion taken from holds.
func TestReadOnlyOlderSchema(t *testing.T) {
	path, id := schemaOne(t)
	ctx := context.Background()
	ro, err := Open(ctx, path, Options{MustExist: true, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of a schema-1 file: %v", err)
	}
	defer ro.Close()
	runs, err := ro.List(ctx, Filter{})
	if err != nil || len(runs) != 1 || runs[0].Conclusion != slo.ConclusionHolds {
		t.Fatalf("list: %+v, %v; want the one run, holding", runs, err)
	}
	if d, err := ro.Get(ctx, id); err != nil || d.Conclusion != slo.ConclusionHolds {
		t.Errorf("get: %v; want the run, holding", err)
	}
}

// schemaOne is a history as schema 1 left it (no runs.conclusion), closed,
// holding one run whose verdict holds: its path and the run's id.
func schemaOne(t *testing.T) (string, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.db")
	db := open(t, path)
	old := testEntry("2026-12-01T07:00:00Z", "http://127.0.0.1:8000", "llama")
	old.Verdict = &slo.Verdict{Holds: true, Conclusion: slo.ConclusionHolds}
	id := put(t, db, old)
	for _, q := range []string{`ALTER TABLE runs DROP COLUMN conclusion`, `PRAGMA user_version = 1`} {
		if _, err := db.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	return path, id
}
