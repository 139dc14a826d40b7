package servebench_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEGoExample: README.md's Go example is example_test.go's
// TestChatSLO as it is, so the example a reader copies is one that runs.
func TestREADMEGoExample(t *testing.T) {
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(md), "```go\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || !strings.Contains(block, "func ") {
		t.Fatal("README.md has no Go example")
	}
	if !strings.Contains(string(src), block) {
		t.Errorf("README.md's Go example is not in example_test.go as written:\n%s", block)
	}
}
