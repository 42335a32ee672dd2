package plugin

import "time"

// SetInstrumentForTest turns the loop instrumentation off (false) or on,
// so benchmarks can compare with wazero's close-on-context-done.
func SetInstrumentForTest(on bool) { skipInstrument = !on }

// SetGuestLogEveryForTest sets how often dropped guest log messages are
// reported and returns a function restoring the previous interval.
func SetGuestLogEveryForTest(d time.Duration) (restore func()) {
	old := guestLogEvery
	guestLogEvery = d
	return func() { guestLogEvery = old }
}
