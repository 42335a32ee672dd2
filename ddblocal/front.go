package ddblocal

import (
	"bufio"
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ddblocal's own HTTP/1.1 front. It serves the requests the AWS SDKs send
// (POST, HTTP/1.1, a Content-Length body, the headers it reads well
// formed) on connections of its own: one goroutine per connection, the
// request line and headers parsed from the connection's buffer, the body
// read to its Content-Length, the answer written in one Write, keep-alive
// and pipelining. Anything else (another method or version, a chunked
// body, Expect, Upgrade, CORS, a query, a header it does not take as is,
// headers longer than its buffer) is handed, with the bytes read so far,
// to net/http's server, which serves that connection from then on: what
// such a client gets is what net/http's front answers, by construction.

// frontBufSize is the size of a connection's read buffer: the longest
// request line and headers the front serves itself.
const frontBufSize = 8 << 10

// fastFront accepts the server's connections and serves them.
type fastFront struct {
	s       *Server
	ln      net.Listener
	handoff *chanListener // net/http's server serves from it

	readHeaderTimeout, readTimeout, idleTimeout time.Duration

	closing   atomic.Bool
	handedOff atomic.Int64 // connections handed to net/http
	mu        sync.Mutex
	conns     map[*fastConn]struct{}
	wg        sync.WaitGroup
}

func newFastFront(s *Server, ln net.Listener, hs *http.Server) *fastFront {
	idle := hs.IdleTimeout
	if idle == 0 { // as net/http: no idle timeout is the read timeout
		idle = hs.ReadTimeout
	}
	return &fastFront{
		s: s, ln: ln,
		handoff:           &chanListener{addr: ln.Addr(), conns: make(chan net.Conn), done: make(chan struct{})},
		readHeaderTimeout: hs.ReadHeaderTimeout, readTimeout: hs.ReadTimeout, idleTimeout: idle,
		conns: map[*fastConn]struct{}{},
	}
}

// serve accepts connections until the listener is closed, retrying
// temporary errors as net/http does.
func (f *fastFront) serve() error {
	var delay time.Duration
	for {
		c, err := f.ln.Accept()
		if err != nil {
			if f.closing.Load() {
				return http.ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			f.s.log.Debug("ddblocal: accept failed; retrying", "err", err, "in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		fc := &fastConn{f: f, conn: c}
		if sc, ok := c.(syscall.Conn); ok {
			fc.raw, _ = sc.SyscallConn()
		}
		f.mu.Lock()
		if f.closing.Load() {
			f.mu.Unlock()
			_ = c.Close()
			continue
		}
		f.conns[fc] = struct{}{}
		f.wg.Add(1)
		f.mu.Unlock()
		go fc.serve()
	}
}

// shutdown stops accepting, closes the idle connections and waits for
// those serving a request to answer it (each closes after its answer),
// until done is closed; then it closes what is left.
func (f *fastFront) shutdown(done <-chan struct{}) {
	f.closing.Store(true)
	_ = f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		if c.idle.Load() {
			_ = c.conn.Close()
		}
	}
	f.mu.Unlock()
	waited := make(chan struct{})
	go func() { f.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-done: // as net/http's Shutdown: what is still busy is left to end
		f.mu.Lock()
		for c := range f.conns {
			_ = c.conn.Close()
		}
		f.mu.Unlock()
	}
}

// fastConn is one connection served by the front.
type fastConn struct {
	f    *fastFront
	conn net.Conn
	idle atomic.Bool // waiting for a request's first byte
	out  []byte
	ans  bytes.Buffer    // the answers of its requests are written into it
	raw  syscall.RawConn // nil when the connection has none
	rd   rawIO           // its raw read and write (front_raw_linux.go)
	wr   rawIO

	// t0 is when the current request's first byte was read (set before
	// its context is made); deadline which of its read deadlines is set
	// (deadlineIdle, ...): set by the connection's goroutine and by its
	// request's context (reqCtx), which may be asked from another.
	t0       time.Time
	deadline atomic.Int32
	// idleEnd is the idle deadline in effect (Unix ns) while deadline is
	// deadlineIdle; 0 when none was set (or no idle timeout).
	idleEnd atomic.Int64
}

// setIdle marks the connection idle or busy; false when the server is
// closing. Without a lock: shutdown sets closing before it looks at idle,
// and setIdle sets idle before it looks at closing, so a connection going
// idle as the server closes is closed by one or the other (or both).
func (c *fastConn) setIdle(idle bool) bool {
	c.idle.Store(idle)
	return !c.f.closing.Load()
}

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, frontBufSize) }}

// aLongTimeAgo is a deadline that has passed: it stops a read at once.
var aLongTimeAgo = time.Unix(1, 0)

func (c *fastConn) serve() {
	f := c.f
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(c.connReader())
	handedOff := false
	defer func() {
		f.mu.Lock()
		delete(f.conns, c)
		f.mu.Unlock()
		if !handedOff {
			_ = c.conn.Close()
			br.Reset(nil)
			readerPool.Put(br)
		}
		f.wg.Done()
	}()
	for {
		if br.Buffered() == 0 {
			if !c.setIdle(true) {
				return
			}
			c.idleDeadline()
			if _, err := br.Peek(1); err != nil {
				return
			}
		}
		c.setIdle(false) // when the server is closing, this request is answered, with Connection: close
		c.t0 = time.Now()
		c.deadline.Store(deadlineIdle)
		req, n, verdict := readHead(br, f.s.testHook.Load() != nil, c)
		switch verdict {
		case headHandOff:
			_ = c.conn.SetReadDeadline(time.Time{})
			handedOff = true
			f.handedOff.Add(1)
			f.handoff.hand(&handoffConn{Conn: c.conn, r: br})
			return
		case headFailed:
			return
		}
		_, _ = br.Discard(n)
		if !c.serveOne(br, &req) {
			return
		}
	}
}

// The read deadlines of a request, as net/http's: its head is read within
// the read-header timeout of its first byte, the whole request within the
// read timeout. The front sets each only before a read that can wait for
// it (a request that came in one piece, as the SDKs send theirs, costs no
// deadline change); whatever asks the connection about the client during
// the request (reqCtx) sets the request's deadline first.
const (
	deadlineIdle    = iota // the idle deadline is in effect: nothing set for this request
	deadlineHead           // the read-header deadline is set
	deadlineRequest        // the request's read deadline is set
)

// headDeadline sets the read-header deadline before a read of the head
// that can wait.
func (c *fastConn) headDeadline() {
	if c.deadline.Load() != deadlineIdle {
		return
	}
	d := c.f.readHeaderTimeout
	if d == 0 {
		d = c.f.readTimeout
	}
	c.idleEnd.Store(0)
	c.setDeadline(d, c.t0)
	if d == c.f.readTimeout {
		c.deadline.Store(deadlineRequest)
	} else {
		c.deadline.Store(deadlineHead)
	}
}

// requestDeadline sets the request's read deadline (the read timeout after
// its first byte) unless it is set (or c is not a front's: a test's).
func (c *fastConn) requestDeadline() {
	if c.f != nil && c.deadline.Swap(deadlineRequest) != deadlineRequest {
		c.idleEnd.Store(0)
		c.setDeadline(c.f.readTimeout, c.t0)
	}
}

// idleDeadline sets the idle deadline (the idle timeout from now) before
// the wait for a request's first byte, unless the one in effect is it to
// within 1/64 of the timeout: a connection busy with one request after
// another changes its deadline about once every 1/64 of the idle timeout
// instead of once a request, and an idle one is closed between 63/64 of
// the timeout and the timeout after its last answer.
func (c *fastConn) idleDeadline() {
	d := c.f.idleTimeout
	now := time.Now()
	if c.deadline.Load() == deadlineIdle && d > 0 && c.idleEnd.Load() >= now.Add(d-d/64).UnixNano() {
		return
	}
	c.setDeadline(d, now)
	if d > 0 {
		c.idleEnd.Store(now.Add(d).UnixNano())
	}
}

// setDeadline sets the read deadline d after t (none when d is 0).
func (c *fastConn) setDeadline(d time.Duration, t time.Time) {
	if d > 0 {
		_ = c.conn.SetReadDeadline(t.Add(d))
	} else {
		_ = c.conn.SetReadDeadline(time.Time{})
	}
}

// serveOne serves a request whose head is read: what ServeHTTP does for
// it (request memory, the body, the operation, the answer). It reports
// whether the connection serves another request.
func (c *fastConn) serveOne(br *bufio.Reader, q *fastRequest) bool {
	s := c.f.s
	reqID := newRequestID()
	ctx := &reqCtx{c: c}
	defer ctx.end()
	charge := s.mem.cost(q.contentLength)
	if err := s.mem.acquire(ctx, charge, s.memWait); err != nil {
		if errors.Is(err, errRequestMemory) {
			s.log.Debug("ddblocal request refused: request memory busy", "id", reqID, "bytes", q.contentLength)
			// As net/http's front: a body of less than 256 KiB is read and
			// dropped before the answer, a larger one closes the connection.
			tooBig := q.contentLength >= 256<<10
			if !tooBig {
				if _, err := br.Discard(int(q.contentLength)); err != nil {
					return false
				}
			}
			keep := c.writeReply(reqID, s.errorReply(contentType, s.mem.busyError(charge)), tooBig || q.close)
			if tooBig {
				c.closeWriteAndWait()
			}
			return keep
		}
		c.writeNothing(false) // the client went away while it waited
		return false
	}
	defer s.mem.release(charge)
	body := make([]byte, q.contentLength)
	if int64(br.Buffered()) < q.contentLength {
		c.requestDeadline() // the body's read can wait
	}
	if _, err := io.ReadFull(br, body); err != nil {
		// a client that stopped sending (or half-closed) mid-body, or
		// the read timeout: net/http's front cancels the request then, so
		// ServeHTTP answers nothing (with Connection: close after a timeout)
		var ne net.Error
		c.writeNothing(errors.As(err, &ne) && ne.Timeout())
		return false
	}
	q.ans = &c.ans
	rep, ok := s.handle(ctx, reqID, &q.request, body)
	if !ok {
		c.writeNothing(false) // the client went away
		return false
	}
	keep := c.writeReply(reqID, rep, q.close)
	if c.ans.Cap() > 64<<10 {
		c.ans = bytes.Buffer{} // a large answer's buffer is not kept
	}
	return keep
}

// writeReply writes an answer with the headers net/http's front sends for
// it, in its order (its header map sorted, then Date, a sniffed
// Content-Type, Connection), and reports whether the connection stays
// open: not when closeAfter, or when the server is closing.
func (c *fastConn) writeReply(reqID string, rep reply, closeAfter bool) bool {
	closeAfter = closeAfter || c.f.closing.Load()
	b := c.out[:0]
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(rep.status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(rep.status)...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(rep.body)), 10)
	if rep.ct != "" {
		b = append(b, "\r\nContent-Type: "...)
		b = append(b, rep.ct...)
	}
	b = append(b, "\r\nX-Amz-Crc32: "...)
	b = strconv.AppendUint(b, uint64(crc32.ChecksumIEEE(rep.body)), 10)
	if rep.errType != "" {
		b = append(b, "\r\nX-Amzn-Errortype: "...)
		b = append(b, rep.errType...)
	}
	b = append(b, "\r\nX-Amzn-Requestid: "...)
	b = append(b, reqID...)
	b = append(b, "\r\nDate: "...)
	b = appendDate(b)
	if rep.ct == "" && len(rep.body) > 0 {
		b = append(b, "\r\nContent-Type: "...)
		b = append(b, http.DetectContentType(rep.body)...)
	}
	if closeAfter {
		b = append(b, "\r\nConnection: close"...)
	}
	b = append(b, "\r\n\r\n"...)
	var err error
	if len(b)+len(rep.body) <= 64<<10 {
		b = append(b, rep.body...)
		err = c.writeAll(b)
	} else {
		bufs := net.Buffers{b, rep.body}
		_, err = bufs.WriteTo(c.conn)
	}
	if cap(b) <= 64<<10 {
		c.out = b[:0]
	} else {
		c.out = nil
	}
	return err == nil && !closeAfter
}

// writeNothing writes what net/http's front sends when ServeHTTP answers
// nothing (a request whose client went away): an empty 200. The
// connection is then closed.
func (c *fastConn) writeNothing(closeHeader bool) {
	b := append(c.out[:0], "HTTP/1.1 200 OK\r\nDate: "...)
	b = appendDate(b)
	b = append(b, "\r\nContent-Length: 0\r\n"...)
	if closeHeader {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	_, _ = c.conn.Write(b)
}

// rstAvoidanceDelay is how long a connection stays half-closed after an
// answer sent before its request's body was read, as net/http's: closing
// it at once would reset it while the client is still sending, and the
// client could lose the answer.
const rstAvoidanceDelay = 500 * time.Millisecond

// closeWriteAndWait half-closes the connection and waits rstAvoidanceDelay
// (the caller then closes it), as net/http does.
func (c *fastConn) closeWriteAndWait() {
	if cw, ok := c.conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	time.Sleep(rstAvoidanceDelay)
}

// dateCache holds the Date header of the current second.
var dateCache atomic.Pointer[cachedDate]

type cachedDate struct {
	unix int64
	text []byte
}

// appendDate appends the time now as an HTTP Date header's value.
func appendDate(b []byte) []byte {
	now := time.Now()
	sec := now.Unix()
	if d := dateCache.Load(); d != nil && d.unix == sec {
		return append(b, d.text...)
	}
	text := now.UTC().AppendFormat(nil, http.TimeFormat)
	dateCache.Store(&cachedDate{unix: sec, text: text})
	return append(b, text...)
}

// chanListener is the net.Listener net/http's server serves: the
// connections the front hands over.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// hand passes c to net/http's server (or closes it once that is closed).
func (l *chanListener) hand(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		_ = c.Close()
	}
}

// handoffConn is a connection handed to net/http: its reads start with the
// bytes the front had read but not served.
type handoffConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *handoffConn) Read(p []byte) (int, error) {
	if c.r != nil {
		if c.r.Buffered() > 0 {
			return c.r.Read(p)
		}
		c.r = nil
	}
	return c.Conn.Read(p)
}

// CloseWrite half-closes the connection, as net/http does to a TCP
// connection before it closes one whose request it did not read.
func (c *handoffConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
