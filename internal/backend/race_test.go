//go:build race

package backend

// The race detector slows every goroutine several times over.
const raceEnabled = true
