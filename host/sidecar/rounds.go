package sidecar

import "time"

// roundFailures throttles the warning of failed lease rounds: the first
// failure is logged, then the 2nd, 4th, 8th… with the count, and the
// first round that succeeds again says so.
type roundFailures struct {
	count int
	since time.Time
}

// roundFailed notes a failed round and logs it when due.
func (r *Reader) roundFailed(f *roundFailures, err error) {
	if f.count == 0 {
		f.since = time.Now()
	}
	f.count++
	if f.count&(f.count-1) == 0 { // a power of two
		r.log.Warn("lease round failed; retrying at the next", "err", why(err), "failedRounds", f.count,
			"failingFor", time.Since(f.since).Round(time.Millisecond).String(), "retryEvery", r.renewEvery().String())
	}
}

// roundOK notes a round that succeeded, logging the recovery after
// failures.
func (r *Reader) roundOK(f *roundFailures) {
	if f.count > 0 {
		r.log.Info("lease round succeeded again", "failedRounds", f.count, "failingFor", time.Since(f.since).Round(time.Millisecond).String())
	}
	*f = roundFailures{}
}
