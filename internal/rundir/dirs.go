package rundir

import (
	"os"
	"path/filepath"

	"github.com/servebench/servebench/internal/slo"
)

// Runs is arg when it is a run directory (or not a directory at all, for
// its reader to explain), else the run directories directly inside it, as
// decide --out and a folder of runs lay them out.
func Runs(arg string) []string {
	if IsRun(arg) {
		return []string{arg}
	}
	entries, err := os.ReadDir(arg)
	if err != nil {
		return []string{arg}
	}
	var dirs []string
	for _, e := range entries {
		if sub := filepath.Join(arg, e.Name()); e.IsDir() && IsRun(sub) {
			dirs = append(dirs, sub)
		}
	}
	if len(dirs) == 0 {
		return []string{arg}
	}
	return dirs
}

// Of is the directory of a run argument: the argument itself, or a records
// file's directory; "" for standard input ("" or "-").
func Of(arg string) string {
	if arg == "" || arg == "-" {
		return ""
	}
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return filepath.Dir(arg)
	}
	return arg
}

// RecordedVerdict is the objective and verdict a judged run wrote into
// dir's summary.json (nil when the run was not judged, or did not finish);
// a *RecordedError when summary.json or its objective does not decode.
func RecordedVerdict(dir string) (*slo.Objective, *slo.Verdict, error) {
	r, err := ReadRecorded(dir)
	if err != nil || r == nil || r.Verdict == nil {
		return nil, nil, err
	}
	o, err := r.DecodeObjective(dir)
	if err != nil {
		return nil, nil, err
	}
	return o, r.Verdict, nil
}

// Same reports whether two paths name one directory.
func Same(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
