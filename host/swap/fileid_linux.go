//go:build linux

package swap

import (
	"io/fs"
	"syscall"
	"time"
)

// identity is st's device, inode, size and times.
func identity(st fs.FileInfo) fileID {
	id := fileID{size: st.Size(), mtime: st.ModTime(), ctime: st.ModTime()}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(s.Dev), uint64(s.Ino) //nolint:unconvert // the types differ by architecture
		id.ctime = time.Unix(int64(s.Ctim.Sec), int64(s.Ctim.Nsec))
	}
	return id
}
