package cli

import (
	"fmt"
	"path/filepath"

	"github.com/servebench/servebench/internal/bench"
	"github.com/servebench/servebench/internal/report"
	"github.com/servebench/servebench/internal/rundir"
)

// writeRunFiles writes a finished run's HTML report into its --out
// directory, and ends the run's output with the line saying where its
// files went, or that without --out none were kept.
func writeRunFiles(env *Env, dir string, res *bench.Result) {
	if dir == "" {
		fmt.Fprintf(env.Stderr, "no files kept: --out DIR writes the records, run.json, summary.json and the HTML report DIR/%s\n", rundir.ReportFile)
		return
	}
	html := ""
	if writeRunHTML(env, dir, res) {
		html = "; HTML report " + filepath.Join(dir, rundir.ReportFile)
	}
	fmt.Fprintf(env.Stderr, "%d records written to %s%s\n", res.Records, dir, html)
}

// writeRunHTML writes a finished run's report.html: the page report
// --format html prints for its directory (TestHTMLRunWritesReport holds
// them byte for byte equal). A page that cannot be written costs the run
// nothing: its records are already on disk.
func writeRunHTML(env *Env, dir string, res *bench.Result) bool {
	if err := report.WriteRunPage(dir, res.Summary, res.Curves); err != nil {
		fmt.Fprintf(env.Stderr, "warning: %s not written: %v (servebench report --format html %s writes it later)\n", rundir.ReportFile, err, dir)
		return false
	}
	return true
}
