package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/outbox"
	"github.com/dynafold/dynafold/internal/keys"
)

// ErrNoOutbox is matched by a drain of a projection without an outbox.
var ErrNoOutbox = errors.New("the projection has no outbox")

// ErrNoTarget is matched by a drain given no delivery target, of a
// projection whose configuration names none either.
var ErrNoTarget = errors.New("no delivery target")

// ErrNoOutboxIndex is matched by DrainPending on an outbox without an index.
var ErrNoOutboxIndex = outbox.ErrNoIndex

// WithDeliver makes the host deliver every projection's effects to t right
// after each row write (ProcessBatch, ApplyEvents), instead of the target
// the configuration names (outbox.deliver). Projections without an outbox
// are not affected.
func WithDeliver(t deliver.Target) Option { return func(o *options) { o.deliver = t } }

// projectionOutbox is a projection's drainer and its delivery target.
type projectionOutbox struct {
	drainer *outbox.Drainer
	target  deliver.Target // nil: effects wait for a drain given a target
}

// setOutbox configures p's outbox from pc: the engine commits effects, and,
// with a target (WithDeliver, else outbox.deliver), drains each written row
// right after its write.
func (h *Host) setOutbox(ctx context.Context, pc ProjectionConfig, p *apply.Projection, o options) error {
	if pc.Outbox == nil {
		return nil
	}
	p.Outbox = pc.Outbox.engineOutbox(pc.ReadModel.EntityType)
	l, _ := p.OutboxLayout()
	po := &projectionOutbox{drainer: &outbox.Drainer{DB: h.db, Layout: l, ClaimFor: pc.Outbox.claimFor(), Now: o.now, Logger: p.Logger,
		SweepEvery: o.sweepEvery, Later: o.pending.later()}}
	po.target = o.deliver
	if po.target == nil && pc.Outbox.Deliver != nil {
		t, err := pc.Outbox.Deliver.target(ctx, h.cfg.Region)
		if err != nil {
			return fmt.Errorf("outbox.deliver: %w", err)
		}
		po.target = t
	}
	po.target = h.protect(pc, po.target, o)
	if po.target != nil {
		// Right after its write, a row's effects go out without being read
		// or claimed again: the write commits them claimed.
		p.Outbox.ClaimFor = po.drainer.ClaimFor
		if o.background > 0 {
			if h.bg == nil {
				h.bg = newBackground(o.background)
			}
			bg, log, name := h.bg, p.Logger, pc.Name
			p.Outbox.Deliver = func(ctx context.Context, c apply.Committed) (int, int) {
				if !bg.enqueue(name, queued{po: po, c: c, log: log}) {
					// closing: the effects stay committed and claimed, for the sweep
					log.Info("the host is closing: the row's effects are left to the outbox sweep", "row", keys.String(c.Key))
				}
				return 0, 0
			}
		} else {
			p.Outbox.Deliver = func(ctx context.Context, c apply.Committed) (int, int) {
				rep, err := po.drainer.Deliver(ctx, c, po.target)
				if err != nil {
					p.Logger.Warn("delivering the row's effects after its write failed; they stay in its outbox: "+po.drainer.LaterHint(true), "row", keys.String(c.Key), "err", err)
				}
				u := 0
				if rep.Undelivered != nil {
					u = 1
				}
				return len(rep.Delivered), u
			}
		}
	}
	if h.outboxes == nil {
		h.outboxes = map[string]*projectionOutbox{}
	}
	h.outboxes[pc.Name] = po
	return nil
}

// DrainReport is what a drain of one row delivered.
type DrainReport struct {
	Projection string
	Key        abi.Item         // the row
	Delivered  []deliver.Effect // in order
	// Undelivered is the effect whose delivery failed (nil when none): it
	// stays at the head of the row's outbox; Err says why.
	Undelivered *deliver.Effect
	Err         error
	// Busy: the drain stopped at an effect another drainer is delivering.
	Busy bool
}

func drainReportOf(projection string, r outbox.Report) DrainReport {
	out := DrainReport{Projection: projection, Key: r.Key, Delivered: r.Delivered, Busy: r.Busy}
	if u := r.Undelivered; u != nil {
		e := u.Effect
		out.Undelivered, out.Err = &e, u.Err
	}
	return out
}

func (h *Host) outboxOf(projection string, target deliver.Target) (*projectionOutbox, deliver.Target, error) {
	po, err := h.outboxNamed(projection)
	if err != nil {
		return nil, nil, err
	}
	if target == nil {
		target = po.target
	}
	if target == nil {
		return nil, nil, fmt.Errorf("%w for projection %q: pass one, or configure outbox.deliver", ErrNoTarget, projection)
	}
	return po, target, nil
}

// outboxNamed returns the outbox of a projection, or why it has none.
func (h *Host) outboxNamed(projection string) (*projectionOutbox, error) {
	if _, err := h.engine(projection); err != nil {
		return nil, err
	}
	po := h.outboxes[projection]
	if po == nil {
		return nil, fmt.Errorf("%w: projection %q: configure its outbox to commit effects", ErrNoOutbox, projection)
	}
	return po, nil
}

// Drain delivers the pending effects of one row of a projection to target
// (nil: the configured one), strictly in order, deleting each once
// delivered. A failed delivery stops the drain and is reported in the
// DrainReport (the error is nil); the error is a DynamoDB failure.
func (h *Host) Drain(ctx context.Context, projection string, key abi.Item, target deliver.Target) (DrainReport, error) {
	po, target, err := h.outboxOf(projection, target)
	if err != nil {
		return DrainReport{Projection: projection, Key: key}, err
	}
	rep, err := po.drainer.Drain(ctx, key, target)
	return drainReportOf(projection, rep), err
}

// DrainPending drains every row of a projection that has pending effects,
// found through the outbox's index (outbox.index): for rows that get no
// more events after a crash between their write and its delivery, or
// after failed deliveries.
func (h *Host) DrainPending(ctx context.Context, projection string, target deliver.Target) ([]DrainReport, error) {
	po, target, err := h.outboxOf(projection, target)
	if err != nil {
		return nil, err
	}
	reps, err := po.drainer.DrainPending(ctx, target)
	out := make([]DrainReport, len(reps))
	for i, r := range reps {
		out[i] = drainReportOf(projection, r)
	}
	return out, err
}

// OutboxProjections returns the projections with an outbox, in
// configuration order.
func (h *Host) OutboxProjections() []string {
	var out []string
	for _, name := range h.order {
		if h.outboxes[name] != nil {
			out = append(out, name)
		}
	}
	return out
}

// SkipEffects removes the first n pending effects of one row of a
// projection without delivering them, in order, and returns them (for the
// caller to keep): for an effect its consumer refuses for good, which holds
// back every later effect of the row. It stops early at an effect another
// drainer is delivering (DrainReport.Busy). The skipped effects are in
// DrainReport.Delivered.
func (h *Host) SkipEffects(ctx context.Context, projection string, key abi.Item, n int) (DrainReport, error) {
	po, err := h.outboxNamed(projection)
	if err != nil {
		return DrainReport{Projection: projection, Key: key}, err
	}
	rep, err := po.drainer.Skip(ctx, key, n)
	return drainReportOf(projection, rep), err
}
