package workload

import (
	"os"
	"regexp"
	"testing"
)

// The file formats shown in docs/WORKLOADS.md parse as the page says.
func TestWorkloadsDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/WORKLOADS.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(jsonl|json)\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) != 2 {
		t.Fatalf("found %d format examples, want a jsonl and a json one", len(blocks))
	}
	for _, b := range blocks {
		var convs []Conversation
		var err error
		if string(b[1]) == "jsonl" {
			convs, err = ParseJSONL("WORKLOADS.md", b[2])
		} else {
			convs, err = ParseShareGPT("WORKLOADS.md", b[2])
		}
		if err != nil {
			t.Errorf("%s example: %v", b[1], err)
		}
		if n := len(convs); (string(b[1]) == "jsonl" && n != 3) || (string(b[1]) == "json" && (n != 1 || len(convs[0].Turns) != 2)) {
			t.Errorf("%s example: %d conversations", b[1], n)
		}
	}
}
