package wal

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

var fakeSync, _ = strconv.Atoi(os.Getenv("DDBLOCAL_EXP_FAKESYNC_US"))

// fdatasync flushes f's data (and the metadata needed to read it back).
func fdatasync(f *os.File) error {
	if fakeSync > 0 {
		time.Sleep(time.Duration(fakeSync) * time.Microsecond)
		return nil
	}
	return syscall.Fdatasync(int(f.Fd()))
}
