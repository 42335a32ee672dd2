//go:build !linux

// Package sockpeek looks at a socket without taking its bytes and without
// waiting: how ddblocal's front sees a client go away, and how the
// host's own connections see an idle one the server closed.
package sockpeek

import "syscall"

// Supported reports whether Peek can look at a socket on this system.
const Supported = false

// Peek cannot peek here: n -1 and errno 0, which callers take as "open,
// nothing known".
func Peek(uintptr) (n int, errno syscall.Errno) { return -1, 0 }
