package wasmcache

import "syscall"

// readOnlyMount reports whether path is on a file system mounted
// read-only.
func readOnlyMount(path string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(path, &st) == nil && st.Flags&0x1 != 0 // ST_RDONLY
}
