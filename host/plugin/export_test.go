package plugin

// SetInstrumentForTest turns the loop instrumentation off (false) or on,
// so benchmarks can compare with wazero's close-on-context-done.
func SetInstrumentForTest(on bool) { skipInstrument = !on }

// CacheDirInUse returns the directory of the wazero file cache p was
// compiled with; "" when it compiled in memory.
func CacheDirInUse(p *Plugin) string { return p.rt.key.cacheDir }
