package plugin

// Stats are counters of a plugin's pool and calls, for metrics and tests.
type Stats struct {
	Live      int    // instances alive now (idle or busy)
	Busy      int    // instances serving a call now
	Created   uint64 // instances created since load
	Discarded uint64 // instances discarded after a failed call
	Calls     uint64 // calls made
	Failures  uint64 // calls that returned a *logic.CallError
}

// Stats returns the plugin's counters.
func (p *Plugin) Stats() Stats { return Stats(p.pool.Counters.Snapshot()) }
