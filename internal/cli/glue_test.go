package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lowerPackages are the pipeline's packages below bench and slo: cli
// reaches them through bench, slo and the other owners, save where a
// permit says why not.
var lowerPackages = []string{"workload", "tokenize", "load", "backend", "sse", "h1", "jsonenc", "record", "metrics", "stats", "telemetry"}

// gluePermits are the lower packages a file of cli may import ("file
// package"), each with its reason: a flag's type, default or parser, an
// error told in a flag's terms, or a type a call into an owner takes.
var gluePermits = map[string]string{
	"flags.go backend":           "--header's value is redacted when it names a credential header",
	"kube.go backend":            "the workers' credentials redacted from kube job's errors",
	"kube.go load":               "the workers' shares checked as each worker's --shard would be",
	"main.go backend":            "Env's redactors guard every error printed",
	"render.go record":           "the exit-3 error names the target load in the report's words",
	"report.go metrics":          "the summary report reads and renders",
	"report.go record":           "the records a judged report's reader hands on (slo.JudgeRead)",
	"report_shard.go metrics":    "the merged summary of shard.MergeInto",
	"report_shard.go record":     "the records a merge hands on to a judge or a page",
	"run.go backend":             "--timeout's default",
	"run.go load":                "--arrival and --grace: their defaults and parser, and the point the flags give",
	"run.go metrics":             "allFailed's message names the error classes",
	"run.go record":              "--api's values, and the failure hints by cause",
	"run.go workload":            "run's workload flags fill a workload.Spec",
	"run_history.go metrics":     "the summary store.AddRun stores",
	"run_shard.go load":          "--shard's parser, and the points it must split",
	"run_slo.go workload":        "a workload error told as a usage error",
	"run_telemetry.go backend":   "a telemetry URL's user:password redacted",
	"run_telemetry.go telemetry": "the telemetry flags fill telemetry.Options; its errors told as the flag's",
	"run_trace.go load":          "--arrival's default, refused beside --trace",
	"run_trace.go record":        "--trace-format's values",
	"run_trace.go workload":      "the trace flags fill workload.TraceOptions; its errors told as the flag's",
	"run_workload.go record":     "a repeated length flag shown as the matrix it makes",
	"sweep.go backend":           "the redactor of the servers a sweep starts; --api checked before any starts",
	"target.go backend":          "--ca-cert, --api and a preflight's error told in the flags' terms",
	"target.go workload":         "a workload error told as a usage error",
}

// TestCLIIsGlue: cli parses flags, prints usage and maps errors to exit
// codes; what runs, in which order and at once lives below it. No file of
// cli starts a goroutine, selects or sends on a channel, and none imports
// a lower package without a permit; a permit no longer used fails too.
func TestCLIIsGlue(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a go statement: concurrency belongs in bench or the package that owns it", fset.Position(n.Pos()))
			case *ast.SelectStmt:
				t.Errorf("%s: a select: waiting on events belongs below cli", fset.Position(n.Pos()))
			case *ast.SendStmt:
				t.Errorf("%s: a channel send: feeding work belongs below cli", fset.Position(n.Pos()))
			}
			return true
		})
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			pkg, ok := strings.CutPrefix(path, "github.com/servebench/servebench/internal/")
			if !ok || !isLower(pkg) {
				continue
			}
			key := name + " " + pkg
			used[key] = true
			if _, ok := gluePermits[key]; !ok {
				t.Errorf("%s imports internal/%s without a permit: call the package that owns the concept (bench, slo, ...), or add a permit saying why", name, pkg)
			}
		}
	}
	for key := range gluePermits {
		if !used[key] {
			t.Errorf("permit %q is no longer used: remove it", key)
		}
	}
}

func isLower(pkg string) bool {
	for _, l := range lowerPackages {
		if pkg == l {
			return true
		}
	}
	return false
}
