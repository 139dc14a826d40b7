package slo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ReadCandidates reads a candidates file (ParseCandidates). Its objective,
// when it names a file beside it, is that file's path; a preset, or a
// path that is no file there, is kept as written (Open tells which). A
// file that cannot be read is the read's *fs.PathError.
func ReadCandidates(file string) (*CandidateFile, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	cf, err := ParseCandidates(b)
	if err != nil {
		return nil, err
	}
	if cf.Objective != "" {
		rel := filepath.Join(filepath.Dir(file), cf.Objective)
		if st, err := os.Stat(rel); err == nil && !st.IsDir() {
			cf.Objective = rel
		}
	}
	return cf, nil
}

// ErrNoCandidates: a decision was given no candidate.
var ErrNoCandidates = errors.New("no candidates")

// DuplicateError is a candidate name used twice: each names its run.
type DuplicateError struct{ Name string }

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("candidate name %q is used twice", e.Name)
}

// GatherCandidates gathers a decision's candidates: the file's
// (ReadCandidates; file "" for none), then those given one by one
// (ParseTarget's), each checked by check when set, in that order, after
// its name is known to be new (a *DuplicateError otherwise). The file's
// objective comes with them.
func GatherCandidates(file string, given []Candidate, check func(Candidate) error) (*CandidateFile, error) {
	cf := &CandidateFile{}
	if file != "" {
		var err error
		if cf, err = ReadCandidates(file); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, c := range append(cf.Candidates, given...) {
		if seen[c.Name] {
			return nil, &DuplicateError{Name: c.Name}
		}
		seen[c.Name] = true
		if check == nil {
			continue
		}
		if err := check(c); err != nil {
			return nil, err
		}
	}
	cf.Candidates = append(cf.Candidates, given...)
	if len(cf.Candidates) == 0 {
		return nil, ErrNoCandidates
	}
	return cf, nil
}
