package plugin

import "sync/atomic"

// Stats are counters of a plugin's pool and calls, for metrics (SPEC X1) and
// tests.
type Stats struct {
	Live      int    // instances alive now (idle or busy)
	Busy      int    // instances serving a call now
	Created   uint64 // instances created since load
	Discarded uint64 // instances discarded after a failed call
	Calls     uint64 // calls made
	Failures  uint64 // calls that returned a *logic.CallError
}

type counters struct {
	live, busy                          atomic.Int64
	created, discarded, calls, failures atomic.Uint64
}

// Stats returns the plugin's counters.
func (p *Plugin) Stats() Stats {
	c := &p.pool.stats
	return Stats{
		Live:      int(c.live.Load()),
		Busy:      int(c.busy.Load()),
		Created:   c.created.Load(),
		Discarded: c.discarded.Load(),
		Calls:     c.calls.Load(),
		Failures:  c.failures.Load(),
	}
}
