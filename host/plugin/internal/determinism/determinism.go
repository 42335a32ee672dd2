// Package determinism holds the deterministic stand-ins both plugin
// transports give a guest for WASI's clock and randomness, so a
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

// Clock is an instance's monotonic clock: virtual time that moves only when
// the guest sleeps (WASI poll_oneoff with a timeout), by exactly what it
// asked for, and never while it runs. So a sleep returns at once and costs
// nothing, elapsed times within a call do not depend on the machine, its
// load or the instance's history, and a guest that waits for the clock to
// move without sleeping runs into its call timeout. (wazero's own fake
// clock moves 1 ms at every read; a guest runtime reads it a number of times
// that depends on its garbage collector, so the same call measured
// different times on different instances.)
type Clock struct{ now int64 }

// clockStart is where every instance's clock starts: not zero, which some
// runtimes take for "unset".
const clockStart = int64(1e9)

// Nanotime reads the clock.
func (c *Clock) Nanotime() int64 {
	if c.now == 0 {
		c.now = clockStart
	}
	return c.now
}

// Nanosleep moves the clock forward by ns.
func (c *Clock) Nanosleep(ns int64) {
	if ns > 0 {
		c.now = c.Nanotime() + ns
	}
}
