package extism

import "github.com/dynafold/dynafold/host/plugin"

// Stats are the pool and call counters, the same as host/plugin's.
type Stats = plugin.Stats

// Stats returns the plugin's counters.
func (p *Plugin) Stats() Stats { return plugin.Stats(p.pool.Counters.Snapshot()) }
