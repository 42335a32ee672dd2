package sidecar

import "time"

// AfterStartCheck makes r call f once the check of its worker id at start
// passed, before its first lease round: tests hold two readers there.
func AfterStartCheck(r *Reader, f func()) { r.afterCheck = f }

// SetAgeClock makes r measure its records' ages (maxRecordAge) by now.
func SetAgeClock(r *Reader, now func() time.Time) { r.ageClock = now }

// SetRetryDelay makes a failed record wait d before each redelivery (one
// that failed on a missing table too), until
// the returned func restores the policy.
func SetRetryDelay(d time.Duration) (restore func()) {
	old, oldNoTable := retryDelay, noTableDelay
	retryDelay.Base, retryDelay.Max = d, d
	noTableDelay.Base, noTableDelay.Max = d, d
	return func() { retryDelay, noTableDelay = old, oldNoTable }
}
