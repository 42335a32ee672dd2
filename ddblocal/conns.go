package ddblocal

import (
	"net"
	"net/http"
	"sync"
)

// freshConns tracks the connections that have not sent a byte of a request
// yet (http.StateNew), so that Close can close them at once.
//
// http.Server.Shutdown closes idle connections at once but waits for a new
// one until it has been new for five seconds (it cannot tell a connection
// about to send its first request from one that never will). An HTTP client
// running requests in parallel often dials a connection that another one's
// return makes unneeded: it sits in the client's pool, never used, and each
// Close of a server that served such a client took five seconds. A
// connection that has not sent a byte has no request in flight, so closing
// it loses nothing: a client retries a request on a pooled connection the
// server closed before reading from it.
type freshConns struct {
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closing bool
}

// track is the http.Server's ConnState hook.
func (f *freshConns) track(c net.Conn, state http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if state != http.StateNew {
		delete(f.conns, c)
		return
	}
	if f.closing { // accepted as the listener closed
		_ = c.Close()
		return
	}
	if f.conns == nil {
		f.conns = map[net.Conn]struct{}{}
	}
	f.conns[c] = struct{}{}
}

// closeAll closes the connections that have not sent a byte and every one
// accepted from now on; it runs when Shutdown begins.
func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closing = true
	for c := range f.conns {
		_ = c.Close()
	}
	clear(f.conns)
}
