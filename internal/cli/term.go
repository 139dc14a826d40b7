package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal; progress output is only
// written to terminals so that logs and pipes stay clean.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
