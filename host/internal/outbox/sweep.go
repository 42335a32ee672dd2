package outbox

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// SweepReport is what one Sweep found and did.
type SweepReport struct {
	// Pending is how many effects the index listed, and Rows how many
	// rows they belong to, when the sweep read it.
	Pending, Rows int
	// Claimed is how many of those rows the sweep left alone: their head
	// effect carried a live claim (its drainer delivers it, or, stopped,
	// the next sweep after the claim ends does).
	Claimed int
	// Oldest is when the oldest listed effect was committed or last
	// claimed, as far as its claim tells (zero: no listed effect carries
	// a claim).
	Oldest time.Time
	// Reports are the drains of the rows whose head was not claimed or
	// whose claim had expired.
	Reports []Report
}

// Sweep drains the rows with pending effects that no live drainer holds:
// those whose head effect carries no claim (its delivery failed) or an
// expired one (its drainer stopped: a crash, a killed process, a lost
// connection), found through the index like DrainPending. A row whose head
// is claimed is left to its holder; once the claim ends the next sweep
// takes it. It is what `host run` does every ClaimFor.
func (d *Drainer) Sweep(ctx context.Context, target deliver.Target) (SweepReport, error) {
	return d.sweepFound(ctx, target, true)
}

// Count is Sweep without delivering: what is pending (Pending, Rows,
// Claimed, Oldest) through the same index queries, no Reports. It is what
// `host run` does while the delivery breaker is open, so the pending
// gauges keep counting the effects that wait for it.
func (d *Drainer) Count(ctx context.Context) (SweepReport, error) {
	return d.sweepFound(ctx, nil, false)
}

// sweepFound counts what the index lists and, when drain is set, drains
// the rows no live drainer holds.
func (d *Drainer) sweepFound(ctx context.Context, target deliver.Target, drain bool) (SweepReport, error) {
	var (
		mu  sync.Mutex
		rep SweepReport
	)
	now := d.now()
	claimFor := d.claimFor()
	reps, err := d.drainFound(ctx, target, func(_, it abi.Item, first bool) bool {
		mu.Lock()
		defer mu.Unlock()
		rep.Pending++
		if until, err := strconv.ParseInt(it[apply.OutboxAttrUntil].Str, 10, 64); err == nil {
			at := time.UnixMilli(until).Add(-claimFor)
			if rep.Oldest.IsZero() || at.Before(rep.Oldest) {
				rep.Oldest = at
			}
		}
		if !first {
			return false
		}
		rep.Rows++
		if claimedBy(it, now) != "" {
			rep.Claimed++
			return false
		}
		return drain
	})
	rep.Reports = reps
	return rep, err
}
