package testenv

import (
	"sync/atomic"
	"time"
)

// Clock is a server clock for tests (ddblocal.Options.Now): real time
// plus the jumps the test makes. A test that needs a record past its
// retention, an iterator past its lifetime or a shard past its age jumps
// the clock instead of sleeping, so neither a fast machine (which would
// outrun a short interval) nor a loaded one (which would overrun it) can
// change what the test exercises. The zero Clock is real time.
type Clock struct{ offset atomic.Int64 }

// Now is the clock's time: time.Now plus every jump so far.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Jump moves the clock d ahead.
func (c *Clock) Jump(d time.Duration) { c.offset.Add(int64(d)) }
