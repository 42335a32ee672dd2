//go:build !linux

package swap

import "io/fs"

// identity is st's size and modification time (the change time stands in
// as the modification time): without an inode, a DirSource relies on its
// racy window and the module's digest.
func identity(st fs.FileInfo) fileID {
	return fileID{size: st.Size(), mtime: st.ModTime(), ctime: st.ModTime()}
}
