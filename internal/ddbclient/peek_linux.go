package ddbclient

import (
	"syscall"
	"unsafe"
)

// peekFD peeks at one byte of a socket without waiting: n 0 and errno 0
// is the end of the connection, EAGAIN nothing to read yet.
func peekFD(fd uintptr) (n int, errno syscall.Errno) {
	var b [1]byte
	r, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return int(r), e
}
