package plugin

// Stats are counters of a plugin's pool and calls, for metrics and tests.
type Stats struct {
	Live      int    // instances alive now (idle or busy)
	Busy      int    // instances serving a call now
	Created   uint64 // instances created since load
	Discarded uint64 // instances discarded after a failed call
	Calls     uint64 // calls made
	Failures  uint64 // calls that returned a *logic.CallError
	// Allocs counts the calls to the plugin's dynafold_alloc. A plugin that
	// keeps its input buffer (Go SDK plugins do) is asked again only for a
	// request larger than any before on that instance.
	Allocs uint64
}

// Stats returns the plugin's counters.
func (p *Plugin) Stats() Stats {
	c := p.pool.Counters.Snapshot()
	return Stats{Live: c.Live, Busy: c.Busy, Created: c.Created, Discarded: c.Discarded, Calls: c.Calls,
		Failures: c.Failures, Allocs: p.allocs.Load()}
}
