package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/keys"
)

// maxBusyNoted bounds the claims noteBusy remembers; past it, the ended
// ones are forgotten.
const maxBusyNoted = 4096

// busyNoted holds the claims (owner and end) noteBusy logged, with their
// ends in Unix milliseconds. Owners are unique to one drain, so one set
// serves every drainer.
var busyNoted = struct {
	sync.Mutex
	m map[string]int64
}{m: map[string]int64{}}

// sweepInterval is SweepEvery, else ClaimFor (what `host run` sweeps at
// by default).
func (d *Drainer) sweepInterval() time.Duration {
	if d.SweepEvery > 0 {
		return d.SweepEvery
	}
	return d.claimFor()
}

// Later names what delivers an effect left pending where a drainer runs,
// for the words of its log lines.
type Later int

const (
	// LaterSweep: `host run`'s outbox sweep (the default).
	LaterSweep Later = iota
	// LaterScheduledDrain: nothing sweeps (a Lambda function); `host
	// drain-pending`, run on a schedule, delivers it.
	LaterScheduledDrain
	// LaterNextDrain: the drainer is a `host drain-pending` (or `host
	// drain`) run; the effect waits for the next one.
	LaterNextDrain
)

// LaterHint says when an effect left pending is delivered after all, where
// the drainer runs (Drainer.Later): by `host run`'s sweep, once its claim
// (if any) ended, or by `host drain-pending` at once; in a Lambda function,
// by a scheduled `host drain-pending`; in `host drain-pending`, by its next
// run. claimed: the effect may still carry a claim.
func (d *Drainer) LaterHint(claimed bool) string {
	switch d.Later {
	case LaterScheduledDrain:
		after := ""
		if claimed {
			after = fmt.Sprintf(" once its claim ends (within %s)", d.claimFor())
		}
		return "no `host run` sweeps the outbox here, so the next `host drain-pending` run on a schedule delivers it" + after +
			" (docs/OUTBOX.md: schedule one where no `host run` runs)"
	case LaterNextDrain:
		return "this run leaves it there, with the row's later effects behind it, for the next `host drain-pending` run (or `host run`'s sweep, where one runs)"
	}
	within := d.sweepInterval()
	if claimed {
		within += d.claimFor()
	}
	return fmt.Sprintf("`host run` sweeps it within %s, or run `host drain-pending` to deliver it now", within)
}

// afterClaimHint says what delivers an effect another drainer holds if
// that drainer stopped, where the drainer runs (Drainer.Later).
func (d *Drainer) afterClaimHint() string {
	switch d.Later {
	case LaterScheduledDrain:
		return "if that one stopped, a scheduled `host drain-pending` delivers it once the claim ends"
	case LaterNextDrain:
		return "if that one stopped, a `host drain-pending` run after the claim ends delivers it"
	}
	return "if that one stopped, `host run` sweeps it once the claim ends"
}

// firstNote reports whether the claim id ending at until (Unix ms) is
// noted for the first time, and notes it.
func firstNote(id string, until int64, now time.Time) bool {
	busyNoted.Lock()
	defer busyNoted.Unlock()
	if _, seen := busyNoted.m[id]; seen {
		return false
	}
	if len(busyNoted.m) >= maxBusyNoted {
		for k, end := range busyNoted.m {
			if end <= now.UnixMilli() {
				delete(busyNoted.m, k)
			}
		}
	}
	if len(busyNoted.m) < maxBusyNoted {
		busyNoted.m[id] = until
	}
	return true
}

// noteBusy logs, once per claim, that a drain stopped at a head another
// drainer holds: at info when the claim is past half its length (its
// holder may have stopped: a sweep takes the effect once the claim ends),
// at debug otherwise (a live delivery, the common case on busy rows).
func (d *Drainer) noteBusy(ctx context.Context, rowKey, head abi.Item, now time.Time) {
	until, _ := strconv.ParseInt(head[apply.OutboxAttrUntil].Str, 10, 64)
	if !firstNote(head[apply.OutboxAttrOwner].Str+"/"+strconv.FormatInt(until, 10), until, now) {
		return
	}
	end := time.UnixMilli(until)
	level := slog.LevelDebug
	if end.Sub(now) < d.claimFor()/2 {
		level = slog.LevelInfo
	}
	d.log().Log(ctx, level, "the row's oldest outbox effect is claimed by another drainer: it is left to that drainer, and "+d.afterClaimHint(),
		"row", keys.String(rowKey), "claimEnds", end.UTC().Format(time.RFC3339Nano), "sweepWithin", (end.Sub(now) + d.sweepInterval()).Round(time.Millisecond))
}

// notDelivered logs an effect whose delivery failed: a warning that the
// sweep (or drain-pending) delivers it later; or, when the delivery
// breaker refused it (deliver.ErrBreakerOpen), a debug line saying it
// waits for the breaker to close: the breaker's own warning when it opened
// covers them all, and while it is open the sweep does not deliver (a
// warning per effect repeated thousands of times what was untrue).
func (d *Drainer) notDelivered(ctx context.Context, rowKey abi.Item, fx deliver.Effect, err error) {
	args := []any{"row", keys.String(rowKey), "stream", fx.Stream, "streamId", fx.StreamID, "version", fx.Version, "index", fx.Index, "err", err}
	if errors.Is(err, deliver.ErrBreakerOpen) {
		d.log().Log(ctx, slog.LevelDebug, "outbox effect not delivered: the delivery breaker is open; it stays at the head of its row's outbox and goes out once the breaker closes (a probe after its cooldown succeeds), or run `host drain-pending` then", args...)
		return
	}
	d.log().Log(ctx, slog.LevelWarn, "outbox effect not delivered; it stays at the head of its row's outbox: "+d.LaterHint(false), args...)
}
