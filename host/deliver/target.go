package deliver

import "context"

// Target is where effects are delivered. Deliver returns nil once the
// destination has accepted e; an error leaves e at the head of its row's
// outbox, to be delivered again. Implementations must be safe for concurrent
// use: drainers deliver different rows at the same time.
type Target interface {
	Deliver(ctx context.Context, e Effect) error
}

// Func adapts a Go function to a Target, as http.HandlerFunc does for
// handlers. Its errors are returned as they are: wrap one with Permanent to
// mark it as an error retrying will not fix.
type Func func(ctx context.Context, e Effect) error

// Deliver calls f(ctx, e).
func (f Func) Deliver(ctx context.Context, e Effect) error { return f(ctx, e) }
