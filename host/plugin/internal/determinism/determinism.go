// Package determinism holds the deterministic stand-ins both plugin
// transports give a guest for WASI's clock and randomness (SPEC W4), so a
// fold is a pure function of its input whichever instance runs it.
package determinism

// seed seeds every call's random stream.
const seed = 0x6479_6e61_666f_6c64 // "dynafold"

// Rand is the random source of one instance: a splitmix64 stream that Reset
// rewinds to a fixed seed before each call, so random_get returns the same
// bytes for the same call on any instance. (wazero's default, a math/rand
// source seeded once per instance, would make them depend on the
// instance's history.)
type Rand struct{ state uint64 }

// Reset rewinds the stream to its seed.
func (r *Rand) Reset() { r.state = seed }

// Read implements io.Reader.
func (r *Rand) Read(p []byte) (int, error) {
	for i := 0; i < len(p); {
		r.state += 0x9e3779b97f4a7c15
		z := r.state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		for j := 0; j < 8 && i < len(p); j++ {
			p[i] = byte(z >> (8 * j))
			i++
		}
	}
	return len(p), nil
}

// Epoch is the frozen wall clock: the Unix epoch, whatever the host's time.
func Epoch() (sec int64, nsec int32) { return 0, 0 }

// NearLimit reports whether a memory of pages pages is at, or within 1/16
// of, a limit of limit pages: how a guest that aborts without a message
// (its allocator failed to grow memory) is recognised as out of memory.
func NearLimit(pages, limit uint64) bool { return pages >= limit-limit/16 }
