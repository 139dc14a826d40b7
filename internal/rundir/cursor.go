package rundir

import (
	"fmt"
	"os"

	"github.com/servebench/servebench/internal/record"
)

// Cursor reads a run directory's records one at a time under the policy
// (ReadRecords), for a reader that takes records from several files in
// turn: the shard merge, which sweeps its workers' records side by side in
// the order their requests ended.
type Cursor struct {
	f    *os.File
	rd   *record.Reader
	name string
}

// OpenCursor opens dir's records file (plain or gzip-compressed).
func OpenCursor(dir string, strict bool) (*Cursor, error) {
	name := RecordsPath(dir)
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	rd := record.NewReader(f)
	if !strict {
		rd.SkipDamaged()
	}
	return &Cursor{f: f, rd: rd, name: name}, nil
}

// Next advances to the next record kept; false at the end or on an error.
func (c *Cursor) Next() bool { return c.rd.Next() }

// Record is the current record, as measured; valid until Next.
func (c *Cursor) Record() *record.Record { return c.rd.Record() }

// Err is the error that ended the reading, naming the file; nil at its end.
func (c *Cursor) Err() error {
	if err := c.rd.Err(); err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
}

// Close closes the file.
func (c *Cursor) Close() error { return c.f.Close() }
