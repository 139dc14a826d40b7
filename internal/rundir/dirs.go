package rundir

import (
	"os"
	"path/filepath"
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
