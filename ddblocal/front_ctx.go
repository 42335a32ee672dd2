package ddblocal

import (
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/dynafold/dynafold/internal/sockpeek"
)

// reqCtx is the context of a request the front serves. net/http learns
// that a client went away from a read it keeps running in the background
// while each request is served (a goroutine, two deadline changes and the
// scheduler's parking per request); reqCtx finds out only when asked:
// Err looks at the connection without blocking (a zero-length peek means
// the client closed it), and Done starts that background wait (a peek
// that blocks until the client sends or closes) only for work that blocks
// on it (waiting for request memory, injected latency). Err asks only
// once the request has run for askAfter: a request answered sooner (a
// GetItem or PutItem takes tens of microseconds) would spend more on the
// question than on its work, and a client that goes away meanwhile finds
// its answer written or not, as with net/http's background read, which
// races the handler too. Once the request is answered the context is
// cancelled, as net/http's is.
type reqCtx struct {
	c         *fastConn
	mu        sync.Mutex
	done      chan struct{} // made by the first Done
	err       error
	watching  bool          // a background wait was started
	watchDone chan struct{} // closed when it stopped
	ended     bool          // the request was answered (or abandoned)
}

var _ context.Context = (*reqCtx)(nil)

// closedChan is the Done channel of a context cancelled before anyone
// asked for it.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (x *reqCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

func (x *reqCtx) Value(any) any { return nil }

func (x *reqCtx) Done() <-chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done != nil {
		return x.done
	}
	if x.err != nil {
		return closedChan
	}
	x.done = make(chan struct{})
	x.watch()
	return x.done
}

// askAfter is how long a request runs before its context's Err asks the
// connection whether the client went away.
const askAfter = time.Millisecond

func (x *reqCtx) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err == nil && !x.watching && !x.ended && time.Since(x.c.t0) >= askAfter {
		x.c.requestDeadline()
		if x.c.peerGone() {
			x.cancel()
		}
	}
	return x.err
}

// cancel cancels the context (x.mu held, x.err nil).
func (x *reqCtx) cancel() {
	x.err = context.Canceled
	if x.done != nil {
		close(x.done)
	}
}

// watch starts the background wait for the client to go away (x.mu
// held): as net/http's, it cancels the context when the connection ends or
// fails (its read timeout included) and stops when the client sends more.
func (x *reqCtx) watch() {
	x.c.requestDeadline()
	x.watching = true
	x.watchDone = make(chan struct{})
	go func() {
		defer close(x.watchDone)
		gone, err := x.c.waitPeer()
		x.mu.Lock()
		if (gone || err != nil) && x.err == nil && !x.ended {
			x.cancel()
		}
		x.mu.Unlock()
	}()
}

// end cancels the context once the request is answered or abandoned and
// stops its background wait; the connection's read deadline is then to be
// set again.
func (x *reqCtx) end() {
	x.mu.Lock()
	x.ended = true
	if x.err == nil {
		x.cancel()
	}
	watching := x.watching
	x.mu.Unlock()
	if watching {
		_ = x.c.conn.SetReadDeadline(aLongTimeAgo)
		<-x.watchDone
	}
}

// peerGone reports whether the client closed the connection (or it
// failed), without waiting and without taking its bytes.
func (c *fastConn) peerGone() bool {
	rc := c.raw
	if rc == nil {
		return false
	}
	gone := false
	_ = rc.Read(func(fd uintptr) bool {
		n, errno := sockpeek.Peek(fd)
		gone = errno != syscall.EAGAIN && (errno != 0 || n == 0)
		return true
	})
	return gone
}

// waitPeer waits until the client sends a byte (left unread), closes the
// connection (gone) or the read fails (err: a deadline, a closed
// connection).
func (c *fastConn) waitPeer() (gone bool, err error) {
	rc := c.raw
	if rc == nil {
		return false, nil
	}
	err = rc.Read(func(fd uintptr) bool {
		n, errno := sockpeek.Peek(fd)
		if errno == syscall.EAGAIN {
			return false
		}
		gone = errno != 0 || n == 0
		return true
	})
	return gone, err
}
