package host

import (
	"context"
	"fmt"
	"time"

	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/outbox"
)

// WithOutboxSweep tells the host how often `host run` sweeps each
// projection's pending effects (the default, 0, is every outbox.claimFor),
// so that its log lines say when an effect left pending goes out.
func WithOutboxSweep(every time.Duration) Option { return func(o *options) { o.sweepEvery = every } }

// PendingDelivery names what delivers, where the host runs, an effect a
// failed delivery left pending at the head of its row's outbox: the words
// of the host's log lines about it (WithPendingDelivery).
type PendingDelivery int

const (
	// PendingBySweep: `host run`'s outbox sweep, or `host drain-pending`
	// at once (the default).
	PendingBySweep PendingDelivery = iota
	// PendingByScheduledDrain: nothing sweeps (a Lambda function); `host
	// drain-pending`, run on a schedule, delivers it.
	PendingByScheduledDrain
	// PendingByNextDrain: the host is a `host drain-pending` (or `host
	// drain`) run; the effect waits for the next one.
	PendingByNextDrain
)

// WithPendingDelivery tells the host what delivers the effects a failed
// delivery leaves pending where it runs (the default is PendingBySweep),
// so that its log lines say what happens to them.
func WithPendingDelivery(by PendingDelivery) Option { return func(o *options) { o.pending = by } }

func (p PendingDelivery) later() outbox.Later {
	switch p {
	case PendingByScheduledDrain:
		return outbox.LaterScheduledDrain
	case PendingByNextDrain:
		return outbox.LaterNextDrain
	}
	return outbox.LaterSweep
}

// OutboxSweep is what one sweep of a projection's outbox found and did.
type OutboxSweep struct {
	Projection string
	// Pending is how many effects the outbox index listed, in Rows rows;
	// Claimed of those rows were left to the live drainer holding their
	// first effect.
	Pending, Rows, Claimed int
	// Oldest is when the oldest listed effect was committed or last
	// claimed, as far as its claim tells (zero when none carries one).
	Oldest time.Time
	// Delivered is how many effects the sweep delivered; Undelivered how
	// many rows stopped at an effect whose delivery failed (it stays
	// first in its row's outbox).
	Delivered, Undelivered int
	// Skipped says why the sweep delivered nothing ("breaker open": the
	// breaker's own drain delivers the effects once it closes); it still
	// counted them (Pending, Rows, Claimed, Oldest).
	Skipped string
}

// OutboxSweepEvery is how often `host run` sweeps the projection's
// pending effects: WithOutboxSweep's interval, else outbox.claimFor.
func (h *Host) OutboxSweepEvery(projection string) time.Duration {
	if h.opts.sweepEvery > 0 {
		return h.opts.sweepEvery
	}
	if po := h.outboxes[projection]; po != nil {
		return po.drainer.ClaimFor
	}
	return DefaultClaimFor
}

// SweepOutbox delivers the projection's pending effects that no live
// drainer holds, to its configured target: the rows, found through the
// outbox index (outbox.index), whose first effect carries no claim (its
// delivery failed) or an expired one (the process delivering it stopped:
// a crash, a kill, a lost connection). Each row is drained in order as
// DrainPending does; a row whose first effect is claimed is left to its
// holder, and the next sweep after the claim ends takes it. While the
// target's breaker is not closed the sweep delivers nothing (Skipped): it
// only counts the pending effects (Pending, Rows, Claimed, Oldest), and
// the breaker's probe and drain deliver them. `host run` sweeps every
// projection this way every OutboxSweepEvery.
func (h *Host) SweepOutbox(ctx context.Context, projection string) (OutboxSweep, error) {
	out := OutboxSweep{Projection: projection}
	po, target, err := h.outboxOf(projection, nil)
	if err != nil {
		return out, err
	}
	sweep := func(ctx context.Context) (outbox.SweepReport, error) { return po.drainer.Sweep(ctx, target) }
	if b := h.breakers[projection]; b != nil && b.Stats().State != deliver.BreakerClosed {
		out.Skipped = "breaker " + b.Stats().State.String()
		sweep = po.drainer.Count
	}
	rep, err := sweep(ctx)
	out.Pending, out.Rows, out.Claimed, out.Oldest = rep.Pending, rep.Rows, rep.Claimed, rep.Oldest
	for _, r := range rep.Reports {
		out.Delivered += len(r.Delivered)
		if r.Undelivered != nil {
			out.Undelivered++
		}
	}
	if err != nil {
		return out, fmt.Errorf("sweeping the outbox of projection %s: %w", projection, err)
	}
	return out, nil
}
