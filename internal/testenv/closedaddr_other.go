//go:build !unix

package testenv

import (
	"net"
	"testing"
)

// ClosedAddr returns a loopback address nothing listens on (a closed
// listener's port; on unix it is also held, see closedaddr_unix.go).
func ClosedAddr(t testing.TB) (addr string, release func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	return addr, func() {}
}
