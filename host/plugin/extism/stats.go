package extism

import "github.com/dynafold/dynafold/host/plugin"

// Stats are the pool and call counters, the same as host/plugin's (Allocs
// stays 0: the Extism runtime allocates its own input buffers).
type Stats = plugin.Stats

// Stats returns the plugin's counters.
func (p *Plugin) Stats() Stats {
	c := p.pool.Counters.Snapshot()
	return Stats{Live: c.Live, Busy: c.Busy, Created: c.Created, Discarded: c.Discarded, Calls: c.Calls, Failures: c.Failures}
}
