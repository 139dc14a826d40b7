package launch

import (
	"bytes"
	"io"
	"sync"
)

// maxLine is the longest partial line a LineWriter holds back; a longer
// one is written as it is (a server that prints megabytes without a
// newline).
const maxLine = 64 << 10

// LineWriter passes whole lines, each through Filter (credentials
// redacted), to W: a credential is never split between two writes and so
// missed. Close writes what is left.
type LineWriter struct {
	W      io.Writer
	Filter func([]byte) []byte
	mu     sync.Mutex
	part   []byte
}

func (l *LineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, b...)
	i := bytes.LastIndexByte(l.part, '\n')
	if i < 0 && len(l.part) < maxLine {
		return len(b), nil
	}
	n := i + 1
	if i < 0 {
		n = len(l.part)
	}
	err := l.emit(l.part[:n])
	l.part = append(l.part[:0], l.part[n:]...)
	return len(b), err
}

// Close writes the last partial line.
func (l *LineWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) == 0 {
		return nil
	}
	err := l.emit(l.part)
	l.part = nil
	return err
}

func (l *LineWriter) emit(b []byte) error {
	if l.Filter != nil {
		b = l.Filter(b)
	}
	_, err := l.W.Write(b)
	return err
}
