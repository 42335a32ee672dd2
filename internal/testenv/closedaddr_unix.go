//go:build unix

package testenv

import (
	"fmt"
	"syscall"
	"testing"
)

// ClosedAddr returns a loopback address that refuses connections and that
// no other listener (another test's server on port 0) can take while the
// test holds it: a TCP socket bound there that never listens. release
// frees it (for a test that then listens there itself); otherwise it is
// freed when the test ends. A port taken from a closed listener could be
// handed to the next server that asks for port 0, and the command under
// test would then reach that server instead of finding nothing.
func ClosedAddr(t testing.TB) (addr string, release func()) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if !released {
			released = true
			syscall.Close(fd)
		}
	}
	t.Cleanup(release)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port), release
}
