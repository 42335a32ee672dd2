// Package backoff is the one jittered, growing delay every retry loop of the
// host uses: lost races, unprocessed keys, transaction conflicts.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy is a delay doubling from Base up to Max, jittered to between half
// and one and a half times its nominal value (mean: the nominal value).
type Policy struct {
	Base time.Duration
	Max  time.Duration
}

// Delay is the wait before retry number attempt (from 1).
func (p Policy) Delay(attempt int) time.Duration {
	d := p.Base << min(max(attempt-1, 0), 30)
	if d > p.Max || d <= 0 {
		d = p.Max
	}
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d)
}

// Wait sleeps the delay of attempt, or returns ctx's error when it ends first.
func (p Policy) Wait(ctx context.Context, attempt int) error {
	return Sleep(ctx, p.Delay(attempt))
}

// Sleep waits d, or returns ctx's error when it ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
