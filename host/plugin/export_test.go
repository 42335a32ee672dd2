package plugin

// SetInstrumentForTest turns the loop instrumentation off (false) or on,
// so benchmarks can compare with wazero's close-on-context-done.
func SetInstrumentForTest(on bool) { skipInstrument = !on }
