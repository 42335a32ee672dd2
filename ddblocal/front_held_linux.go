//go:build linux

package ddblocal

import (
	"bufio"
	"os"
	"syscall"
	"time"
)

// The held read. Each RawConn.Read resets the poller's readiness before it
// calls its function, so a read started after an answer must read once to
// learn whether the next request came: on a connection whose client waits
// for each answer, that read finds nothing (EAGAIN) after every answer.
// The front instead serves a connection's requests from inside one
// RawConn.Read: its function reads, serves every whole request buffered
// (the answer written with RawConn.Write, which takes the write lock, not
// the read one) and returns false to wait for the socket, without the
// read that finds nothing when the last read drained the socket (it read
// less than it asked for; the poller is edge-triggered, so a read that
// filled the buffer is followed by another before the wait). A wake-up
// with nothing new reads EAGAIN and waits again. The wait keeps the
// deadlines (RawConn.Read returns the idle or read-header deadline's
// error) and the server's shutdown (its Close of the connection). A
// request whose body is not all read when its head is leaves the held
// read: the front's loop serves it with reads that wait, as before.

// heldSupported: the front serves its connections from a held read.
const heldSupported = true

// heldExit is why a held read ended.
type heldExit int

const (
	heldEnd     heldExit = iota // the connection is to close
	heldHandOff                 // net/http serves it from here
	heldServe                   // the front's loop serves heldRead.req, whose head is consumed
)

// heldRead is a connection's state in its held read, kept by its
// goroutine.
type heldRead struct {
	fn      func(fd uintptr) bool // c.held, bound once
	br      *bufio.Reader         // the connection's buffered reader
	on      bool                  // inside the held read's function, whose descriptor is fd
	fd      uintptr               // (read by the request's context, during the request)
	drained bool                  // the last read found the socket empty, or read less than asked
	inReq   bool                  // a request's first byte is read (t0 and its deadline set)
	exit    heldExit              // why the held read ended
	req     fastRequest           // the request left to the front's loop (heldServe)
}

// serveHeld serves c's requests from inside one RawConn.Read, until the
// connection ends, is handed off or a request is left to the caller.
func (c *fastConn) serveHeld(br *bufio.Reader) heldExit {
	h := &c.hd
	if h.fn == nil {
		h.fn = c.held
	}
	h.br, h.exit, h.inReq = br, heldEnd, false
	err := c.raw.Read(h.fn)
	h.br, h.on = nil, false
	if err != nil { // a deadline passed, or the connection was closed
		return heldEnd
	}
	return h.exit
}

// held is the function of the held read: true to end it (h.exit says
// why), false to wait for the socket.
func (c *fastConn) held(fd uintptr) bool {
	h := &c.hd
	h.on, h.fd = true, fd
	h.drained = false // called at the start or after a wake-up: read first
	br := h.br
	for {
		if !h.inReq {
			if br.Buffered() == 0 {
				if !c.setIdle(true) {
					return c.heldDone(heldEnd)
				}
				c.idleDeadline()
				if h.drained {
					return c.heldWait()
				}
				if _, err := br.Peek(1); err != nil {
					if err == errWouldBlock {
						return c.heldWait()
					}
					return c.heldDone(heldEnd)
				}
			}
			c.setIdle(false) // when the server is closing, this request is answered, with Connection: close
			c.t0 = time.Now()
			c.deadline.Store(deadlineIdle)
			h.inReq = true
		}
		req, n, verdict := readHead(br, c.f.s.testHook.Load() != nil, c)
		switch verdict {
		case headWait:
			return c.heldWait()
		case headHandOff:
			return c.heldDone(heldHandOff)
		case headFailed:
			return c.heldDone(heldEnd)
		}
		h.inReq = false
		if whole := int64(n) + req.contentLength; int64(br.Buffered()) < whole && !h.drained && whole <= int64(br.Size()) {
			_, _ = br.Peek(int(whole)) // what more the socket has now, without waiting
		}
		_, _ = br.Discard(n)
		if int64(br.Buffered()) < req.contentLength {
			h.req = req
			return c.heldDone(heldServe)
		}
		if !c.serveOne(br, &req) {
			return c.heldDone(heldEnd)
		}
	}
}

// heldWait leaves the held read's function to wait for the socket.
func (c *fastConn) heldWait() bool {
	c.hd.on = false
	return false
}

// heldDone ends the held read.
func (c *fastConn) heldDone(e heldExit) bool {
	c.hd.on, c.hd.exit = false, e
	return true
}

// heldReadRaw reads the socket inside the held read, without waiting:
// errWouldBlock when it has nothing.
func (c *fastConn) heldReadRaw(p []byte) (int, error) {
	h := &c.hd
	for {
		n, errno := rawRead(h.fd, p)
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			h.drained = true
			return 0, errWouldBlock
		case 0:
			h.drained = n < len(p)
			return n, nil
		}
		return 0, errno
	}
}

// watchFile is a duplicate of the connection's descriptor, with its own
// place in the poller, for the background wait of a request's context:
// the connection's own RawConn.Read is held by the request's goroutine.
// Its read deadline is the request's.
func (c *fastConn) watchFile() *os.File {
	if !c.hd.on {
		return nil
	}
	nfd, _, e := syscall.Syscall(syscall.SYS_FCNTL, c.hd.fd, syscall.F_DUPFD_CLOEXEC, 0)
	if e != 0 {
		return nil
	}
	f := os.NewFile(nfd, "ddblocal-watch")
	if c.f != nil && c.f.readTimeout > 0 {
		_ = f.SetReadDeadline(c.t0.Add(c.f.readTimeout))
	}
	return f
}
