package sidecar

import (
	"context"
	"errors"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/lease"
)

// SweepObserver is an Observer that is also told what each sweep of a
// projection's pending outbox effects found (OutboxSwept, err set when it
// failed), and when this worker stops sweeping it (NotSweeping: another
// worker sweeps now); telemetry.Metrics is one.
type SweepObserver interface {
	OutboxSwept(s host.OutboxSweep, at time.Time, err error)
	NotSweeping(projection string)
}

// sweepLoop sweeps the pending effects of every projection with an outbox
// (index and target configured) until ctx ends, one goroutine per
// projection, every Host.OutboxSweepEvery (a little jittered), while this
// worker is the fleet's sweeper (see sweeps).
func (r *Reader) sweepLoop(ctx context.Context) {
	if r.opts.SweepEvery < 0 {
		return
	}
	done := make(chan struct{})
	n := 0
	for _, p := range r.h.OutboxProjections() {
		n++
		go func() {
			defer func() { done <- struct{}{} }()
			r.sweepProjection(ctx, p)
		}()
	}
	for range n {
		<-done
	}
}

// sweepProjection sweeps one projection's outbox until ctx ends, or at
// once when it cannot be swept (no index, no target).
func (r *Reader) sweepProjection(ctx context.Context, projection string) {
	every := r.opts.SweepEvery
	if every == 0 {
		every = r.h.OutboxSweepEvery(projection)
	}
	timer := time.NewTimer(jitter(every))
	defer timer.Stop()
	swept := false // this worker swept last time: the gauges are its own
	so, _ := r.obs.(SweepObserver)
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		timer.Reset(jitter(every))
		if !r.sweeper.Load() {
			if swept && so != nil {
				so.NotSweeping(projection)
			}
			swept = false
			continue
		}
		rep, err := r.h.SweepOutbox(ctx, projection)
		switch {
		case errors.Is(err, host.ErrNoOutboxIndex):
			// effects left by a crash or a failed delivery wait until their
			// row's next write, or for ever: nothing can find them
			r.log.Warn("outbox: the projection has no outbox.index, so effects left pending by a crash or a failed delivery are never swept and `host drain-pending` cannot find them (each waits for its row's next write, or `host drain --row KEY`); set \"index\" in its outbox (e.g. \"outbox-pending\") and run `host tables create`, which adds it",
				"projection", projection)
			return
		case errors.Is(err, host.ErrNoTarget):
			r.log.Info("outbox: pending effects are not swept, since the outbox has no deliver target; `host drain-pending --webhook URL` delivers them", "projection", projection)
			return
		}
		if ctx.Err() != nil {
			return
		}
		swept = true
		if so != nil {
			so.OutboxSwept(rep, time.Now(), err)
		}
		switch {
		case err != nil:
			r.log.Warn("outbox: sweeping the pending effects failed; trying again at the next sweep", "projection", projection, "every", every, "err", why(err))
		case rep.Delivered > 0 || rep.Undelivered > 0:
			r.log.Info("outbox: swept pending effects no drainer held (left by a stopped process or a failed delivery)", "projection", projection,
				"delivered", rep.Delivered, "undelivered", rep.Undelivered, "pending", rep.Pending, "claimed", rep.Claimed)
		}
	}
}

// sweeps reports whether this worker is the fleet's sweeper: the one whose
// process holds the live lease with the lowest shard id, as of a lease
// round. Workers holding no lease never sweep; while a lease changes hands
// two workers may both sweep for a round, which only costs reads (a claim
// keeps each effect to one drainer at a time).
func (r *Reader) sweeps(all []lease.Lease, expired func(lease.Lease) bool) bool {
	var low *lease.Lease
	for i, l := range all {
		if l.Owner == "" || l.Finished() || expired(l) {
			continue
		}
		if low == nil || l.Key < low.Key {
			low = &all[i]
		}
	}
	return low != nil && low.Owner == r.sc.WorkerID && low.Instance == r.instance
}
