package slo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCandidatesObjective: an objective file beside the candidates
// file is found from any working directory; a preset is kept by name.
func TestReadCandidatesObjective(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte("slos: ['ttft p95 <= 1s']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ objective, want string }{
		{"mine.yaml", filepath.Join(dir, "mine.yaml")},
		{"chat", "chat"},
		// no such file beside it: kept as written, for Open to refuse
		{"other.yaml", "other.yaml"},
	} {
		file := filepath.Join(dir, "candidates.yaml")
		body := "objective: " + c.objective + "\ncandidates:\n  - name: a\n    url: http://127.0.0.1:8000\n"
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cf, err := ReadCandidates(file)
		if err != nil {
			t.Fatal(err)
		}
		if cf.Objective != c.want || len(cf.Candidates) != 1 {
			t.Errorf("objective %q: got %q and %d candidates, want %q and 1", c.objective, cf.Objective, len(cf.Candidates), c.want)
		}
	}
	if _, err := ReadCandidates(filepath.Join(dir, "none.yaml")); !errors.As(err, new(*fs.PathError)) {
		t.Errorf("a missing file: %v, want a *fs.PathError", err)
	}
}

// TestGatherCandidates: the file's candidates come first, then those
// given; a name used twice, across the two, is refused; check sees each
// in that order and its error stops the rest; none at all is
// ErrNoCandidates.
func TestGatherCandidates(t *testing.T) {
	file := filepath.Join(t.TempDir(), "candidates.yaml")
	body := "objective: chat\ncandidates:\n  - name: a\n    url: http://127.0.0.1:8000\n  - name: b\n    url: http://127.0.0.1:8001\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Candidate{Name: "c", URL: "http://127.0.0.1:8002"}
	errCheck := errors.New("checked")
	for _, tc := range []struct {
		name    string
		file    string
		given   []Candidate
		failAt  string // the candidate check refuses
		want    string // the names gathered, or the error
		checked string
	}{
		{"the file's, then those given", file, []Candidate{c}, "", "a b c", "a b c"},
		{"given alone", "", []Candidate{c}, "", "c", "c"},
		{"a name used twice", file, []Candidate{{Name: "b", URL: "http://127.0.0.1:9"}}, "", `candidate name "b" is used twice`, "a b"},
		{"check's error stops the rest", file, []Candidate{c}, "b", "checked", "a b"},
		{"none", "", nil, "", "no candidates", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var checked []string
			cf, err := GatherCandidates(tc.file, tc.given, func(c Candidate) error {
				checked = append(checked, c.Name)
				if c.Name == tc.failAt {
					return errCheck
				}
				return nil
			})
			var got string
			if err != nil {
				got = err.Error()
			} else {
				for _, c := range cf.Candidates {
					got = strings.TrimSpace(got + " " + c.Name)
				}
				if tc.file != "" && cf.Objective != "chat" {
					t.Errorf("objective %q, want the file's", cf.Objective)
				}
			}
			if got != tc.want || strings.Join(checked, " ") != tc.checked {
				t.Errorf("got %q after checking %q, want %q after %q", got, checked, tc.want, tc.checked)
			}
		})
	}
}
