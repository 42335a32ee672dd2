package apply

import (
	"context"
	"fmt"
	"time"
)

// Limiter is a projection's rate limit: Wait takes tokens for a batch's
// events and row writes, sleeping as long as the limit requires, and
// returns how long it slept; an error (the context ended) fails the batch's
// rows, to be delivered again.
type Limiter interface {
	Wait(ctx context.Context, events, writes int) (time.Duration, error)
}

// waitLimit waits for the tokens of the batch's events and rows; when the
// wait fails, every row fails with its error (res.Rows is filled in).
func (e *Engine) waitLimit(ctx context.Context, rows map[string]*rowWork, order []string, res *Result) error {
	events := 0
	for _, k := range order {
		for _, ri := range rows[k].instances.list {
			events += len(ri.ins)
		}
	}
	waited, err := e.p.Limit.Wait(ctx, events, len(order))
	res.Waited = waited
	if err == nil {
		return nil
	}
	err = fmt.Errorf("waiting for the rate limit of projection %q: %w", e.p.Name, err)
	res.Rows = make([]Outcome, len(order))
	for i, k := range order {
		res.Rows[i] = e.failed(rows[k], err)
	}
	return err
}
