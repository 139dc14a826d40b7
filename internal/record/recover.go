package record

import (
	"cmp"
	"fmt"
	"slices"
)

// Duplicate is a record whose id an earlier line of the same file holds
// already: a record is unique by its id, so the line is dropped.
type Duplicate struct {
	Line int
	ID   int64
}

// Duplicates returns the lines the reader dropped as duplicates, in file
// order.
func (r *Reader) Duplicates() []Duplicate { return r.dups }

// ids is the set of record ids a reader has met. A run numbers its
// records from 0, so a bit per id keeps a long run's set small; ids
// outside that range go to a map.
type ids struct {
	bits  []uint64
	other map[int64]bool
}

// maxBitID bounds the ids kept as bits (128 MiB of them at most).
const maxBitID = 1 << 30

// add adds id and reports whether it was new.
func (s *ids) add(id int64) bool {
	if id < 0 || id >= maxBitID {
		if s.other == nil {
			s.other = map[int64]bool{}
		}
		if s.other[id] {
			return false
		}
		s.other[id] = true
		return true
	}
	w, b := id/64, uint64(1)<<(id%64)
	if int(w) >= len(s.bits) {
		s.bits = append(s.bits, make([]uint64, int(w)+1-len(s.bits))...)
	}
	if s.bits[w]&b != 0 {
		return false
	}
	s.bits[w] |= b
	return true
}

// keep is called for each valid record read: false for a duplicate,
// which is listed and dropped; a kept record's point is noted.
func (r *Reader) keep(rec *Record) bool {
	if !r.seen.add(rec.ID) {
		r.dups = append(r.dups, Duplicate{Line: r.line, ID: rec.ID})
		return false
	}
	if r.points == nil {
		r.points = map[int]*PointClient{}
	}
	pc := r.points[rec.Point]
	if pc == nil {
		pc = &PointClient{Index: rec.Point, Load: rec.Load}
		r.points[rec.Point] = pc
		if r.first == nil {
			r.first = &Target{API: rec.API, Model: rec.Model}
		}
	}
	pc.Span.Add(rec)
	return true
}

// Complete returns run with what its run.json lacks filled in from the
// records read. run.json is rewritten after each load point, so a run
// killed during a point has no entry for it: the point is added with its
// load and its measured span from its records, over which its telemetry
// is summarised. A nil run (run.json missing or damaged) is rebuilt from
// the records alone: the target's API and model, and every point.
func (r *Reader) Complete(run *Run) *Run {
	if run == nil {
		if r.first == nil {
			return nil
		}
		run = &Run{Schema: RunSchema, Target: *r.first}
	}
	for _, pc := range r.points {
		if !slices.ContainsFunc(run.Points, func(p PointClient) bool { return p.Index == pc.Index }) {
			run.Points = append(run.Points, *pc)
		}
	}
	slices.SortStableFunc(run.Points, func(a, b PointClient) int { return cmp.Compare(a.Index, b.Index) })
	return run
}

// String names a duplicate for a warning.
func (d Duplicate) String() string { return fmt.Sprintf("line %d (id %d)", d.Line, d.ID) }
