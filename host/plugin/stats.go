package plugin

import "github.com/dynafold/dynafold/internal/instpool"

// Stats are counters of a plugin's pool and calls, for metrics (SPEC X1) and
// tests.
type Stats = instpool.Stats

// Stats returns the plugin's counters.
func (p *Plugin) Stats() Stats { return p.pool.Counters.Snapshot() }
