package slo

import (
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
