package lambda

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dynafold/dynafold/host"
)

// errMarginReached is the cause of the batch context's end when the
// invocation reached its deadline margin.
var errMarginReached = errors.New("the invocation reached its deadline margin")

// DeadlineError is the error of a row (or a record's key) that failed
// because the invocation reached its deadline margin: the function stopped
// Margin before its timeout to answer in part, so the row was not finished
// and its records go back to the source. Err is what the row's last call
// returned (a context deadline error, typically an SDK call's).
type DeadlineError struct {
	Margin time.Duration
	Err    error
}

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("the function's time ran out: it stops %d ms before its timeout to answer in part, so this row was not finished "+
		"and its records go back to the source to be delivered again; raise the function's timeout or lower the batch size (BatchSize of the event source mapping or pipe): %v",
		e.Margin.Milliseconds(), e.Err)
}

func (e *DeadlineError) Unwrap() error { return e.Err }

// batchContext returns the context the batch is processed under: ctx
// ending x.margin before its deadline, with errMarginReached as its cause.
func (x *handler) batchContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok || x.margin <= 0 {
		return ctx, func() {}
	}
	return context.WithDeadlineCause(ctx, deadline.Add(-x.margin), errMarginReached)
}

// explainDeadline makes the errors of the rows and keys that failed on
// the batch context's end, once it reached the deadline margin, say so
// (DeadlineError wrapping each).
func (x *handler) explainDeadline(pctx context.Context, res *host.Result) {
	if res == nil || !errors.Is(context.Cause(pctx), errMarginReached) {
		return
	}
	wrap := func(err error) error {
		var de *DeadlineError
		if err == nil || errors.As(err, &de) ||
			!(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, errMarginReached)) {
			return err
		}
		return &DeadlineError{Margin: x.margin, Err: err}
	}
	for _, pr := range res.Projections {
		for i := range pr.Rows {
			pr.Rows[i].Err = wrap(pr.Rows[i].Err)
		}
		for i := range pr.KeyFailures {
			pr.KeyFailures[i].Err = wrap(pr.KeyFailures[i].Err)
		}
	}
}
