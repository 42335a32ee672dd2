// Package sockpeek looks at a socket without taking its bytes and without
// waiting: how ddblocal's front sees a client go away, and how the
// host's own connections see an idle one the server closed.
package sockpeek

import (
	"syscall"
	"unsafe"
)

// Supported reports whether Peek can look at a socket on this system.
const Supported = true

// Peek peeks at one byte of the socket fd (from syscall.RawConn's Read
// or Control) without waiting: n 1 is a byte waiting, n 0 with errno 0
// the end of the connection, errno EAGAIN nothing to read yet.
func Peek(fd uintptr) (n int, errno syscall.Errno) {
	var b [1]byte
	r, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return int(r), e
}
