package extism

import "context"

// CallVersion calls dynafold_abi_version on a pooled instance: the cost of
// an Extism call that does nothing (BenchmarkCallOverhead).
func (p *Plugin) CallVersion(ctx context.Context) error {
	in, err := p.pool.Acquire(ctx, ErrClosed)
	if err != nil {
		return err
	}
	defer p.pool.Release(ctx, in)
	_, _, err = p.abiVersion(ctx, in)
	return err
}

// SetCloseOnContextDone turns wazero's close-on-context-done off (or on)
// for plugins loaded afterwards, to measure its cost: without it a timeout
// cannot stop a guest.
func SetCloseOnContextDone(on bool) { closeOnContextDone = on }

// CacheDirInUse returns the directory of the wazero file cache p was
// compiled with; "" when it compiled in memory.
func (p *Plugin) CacheDirInUse() string {
	if p.cache == nil {
		return ""
	}
	return p.cache.dir
}
