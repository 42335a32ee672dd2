package apply

import (
	"context"

	"github.com/dynafold/dynafold/internal/backoff"
)

// retryWait waits before retrying a row whose write lost its race for the
// attempt-th time. The first retry goes at once: its re-read is already a
// round trip, and it sees the winner's write. Later ones wait the jittered
// delay of Retry for that attempt (Base doubling up to Max), which spreads
// many lanes racing on one row; the default budget of 12 tries still waits
// about 1.3 s in all.
func (e *Engine) retryWait(ctx context.Context, attempt int) error {
	if attempt <= 1 {
		return ctx.Err()
	}
	return backoff.Policy{Base: e.p.Retry.Base, Max: e.p.Retry.Max}.Wait(ctx, attempt)
}
