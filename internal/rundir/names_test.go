package rundir

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNoOtherPackageNamesTheFiles: the run directory has one owner. No
// non-test Go file of the repository (the main module and tools/) outside
// this package names one of its files in a string literal; they use the
// constants, or better the functions, of this package. Comments may name
// the files in prose, and tests may check the layout from outside.
func TestNoOtherPackageNamesTheFiles(t *testing.T) {
	names := []string{RecordsFile, RecordsGzipFile, RunFile, SummaryFile, TelemetryFile, ReportFile}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	own, _ := filepath.Abs(".")
	var found []string
	var walked []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == own || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		walked = append(walked, rel)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(names, s) {
				found = append(found, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// the walk reached both modules
	for _, want := range []string{filepath.Join("internal", "cli", "report.go"), filepath.Join("tools", "loadcheck", "records.go")} {
		if !slices.Contains(walked, want) {
			t.Fatalf("the walk of %s did not reach %s (%d files)", root, want, len(walked))
		}
	}
	for _, f := range found {
		t.Errorf("%s names a file of the run directory: use package rundir", f)
	}
}
