//go:build !unix

package h1

// peek cannot look at the socket here: an idle connection its server
// closed fails as its request is sent.
func (c *conn) peek() socketState { return quiet }
