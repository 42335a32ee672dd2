//go:build linux

package ddblocal

import (
	"io"
	"syscall"
	"unsafe"
)

// The front reads its connections and writes its answers with raw
// system calls on the non-blocking socket (through syscall.RawConn, so
// waiting for it stays the poller's): such a call never blocks, and
// without the runtime's entersyscall and exitsyscall a read or a write
// does not wake the runtime's monitor thread, which a server idle between
// requests otherwise wakes a few times a request (a futex wake and its
// sleeps: about 0.7 futex and 0.6 nanosleep calls a GetItem).

// rawIO is a connection's raw read or write in progress: its buffer,
// what it did, and the function RawConn calls (bound once, so a call
// allocates nothing).
type rawIO struct {
	p     []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// read is the raw read RawConn.Read calls: false to wait for the socket.
func (r *rawIO) read(fd uintptr) bool {
	for {
		r1, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.n, r.errno = int(r1), e
		return true
	}
}

// write is the raw write RawConn.Write calls, until all of p is written
// or an error: false to wait for room.
func (r *rawIO) write(fd uintptr) bool {
	for r.n < len(r.p) {
		r1, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.p[r.n])), uintptr(len(r.p)-r.n))
		switch e {
		case 0:
			r.n += int(r1)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			r.errno = e
			return true
		}
	}
	return true
}

// rawReader reads c's socket; an error is what RawConn.Read returns (a
// deadline passed, the connection closed), the errno of the read, or
// io.EOF.
type rawReader struct{ c *fastConn }

func (r rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	rd := &r.c.rd
	rd.p, rd.n, rd.errno = p, 0, 0
	err := r.c.raw.Read(rd.fn)
	n, errno := rd.n, rd.errno
	rd.p = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// connReader is what the front's buffered reader reads: the raw reader
// when the connection has a RawConn.
func (c *fastConn) connReader() io.Reader {
	if c.raw == nil {
		return c.conn
	}
	c.rd.fn, c.wr.fn = c.rd.read, c.wr.write
	return rawReader{c}
}

// writeAll writes b to the connection, all of it or an error.
func (c *fastConn) writeAll(b []byte) error {
	if c.wr.fn == nil || len(b) == 0 {
		_, err := c.conn.Write(b)
		return err
	}
	w := &c.wr
	w.p, w.n, w.errno = b, 0, 0
	err := c.raw.Write(w.fn)
	if err == nil && w.errno != 0 {
		err = w.errno
	}
	w.p = nil
	return err
}
