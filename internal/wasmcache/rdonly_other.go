//go:build !linux

package wasmcache

// readOnlyMount reports whether path is on a file system mounted
// read-only; outside Linux it does not tell, and says no.
func readOnlyMount(string) bool { return false }
