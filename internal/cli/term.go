package cli

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether a stream (stdin, stdout, stderr) is a
// terminal; progress output is only written to terminals so that logs and
// pipes stay clean, and report reads stdin only when it is not one.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
