//go:build unix

package h1

import "golang.org/x/sys/unix"

// peek looks at an idle connection's socket without reading from it or
// waiting: one non-blocking system call, where net/http keeps a goroutine
// reading every idle connection to know that its server closed it.
func (c *conn) peek() socketState {
	if c.raw == nil {
		return quiet
	}
	st := broken
	err := c.raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case err == unix.EAGAIN || err == unix.EWOULDBLOCK:
			st = quiet
		case err == nil && n > 0:
			st = pending
		}
		// n == 0 is the server's FIN, any other error a broken socket
		return true
	})
	if err != nil {
		return broken
	}
	return st
}
