//go:build !linux

package ddbclient

import "syscall"

// peekFD cannot peek here: an idle connection is taken as open (a
// request on one the server closed fails and is retried by the SDK's
// retry policy).
func peekFD(uintptr) (int, syscall.Errno) { return -1, 0 }
