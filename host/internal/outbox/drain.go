// Package outbox delivers the effects a projection committed with its rows
// (apply.Outbox): per row, strictly in commit order, at least once. A drain
// queries the row's head item, claims it with a conditional update (owner
// and an end time), hands it to a deliver.Target, deletes it on success and
// repeats. A failed delivery releases the claim and leaves the effect at the
// head for the next drain; a crashed drainer's claim expires and the next
// drainer takes the effect over.
//
// A drain that finds the head claimed by another drainer hands the row over
// to it: it marks the head as awaited (OutboxAttrWaiter) and stops (Busy).
// The holder deletes what it delivered on the condition that nobody waits,
// so it learns of the hand-over and drains the row on.
//
// Right after a write, Deliver delivers what the write committed without
// a read or a claim of its own: the write committed its items already
// claimed, and read the row's outbox head beside it (apply.Committed).
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/keys"
)

// DefaultClaimFor is how long a claim holds when Drainer.ClaimFor is 0.
const DefaultClaimFor = 30 * time.Second

// Drainer drains one projection's outbox. It is safe for concurrent use;
// drains of one row by several drainers (or processes) deliver each effect
// at least once, in order.
type Drainer struct {
	DB       store.DB
	Layout   apply.OutboxLayout
	ClaimFor time.Duration    // 0: DefaultClaimFor
	Now      func() time.Time // nil: time.Now
	Logger   *slog.Logger     // nil: slog.Default()
	Rows     int              // rows DrainPending drains at a time (0: DefaultRows)
	// SweepEvery is how often `host run` sweeps the projection's pending
	// effects (0: ClaimFor, its default), for the words of log lines.
	SweepEvery time.Duration
	// Later names what delivers an effect left pending where the drainer
	// runs, for the words of log lines (LaterHint).
	Later Later
}

// Undelivered is an effect whose delivery failed: it stays at the head of
// its row's outbox.
type Undelivered struct {
	Effect deliver.Effect
	Err    error
}

// Report is what one drain of a row did.
type Report struct {
	Key         abi.Item
	Delivered   []deliver.Effect // in order
	Undelivered *Undelivered     // the head effect whose delivery failed, if any
	// Busy is set when the drain stopped at a head another drainer holds
	// a live claim on: that drainer delivers it.
	Busy bool
}

// ErrNoRowKey is the error of an outbox item that does not say which row
// it belongs to.
var ErrNoRowKey = errors.New("outbox item without a row key")

func (d *Drainer) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Drainer) claimFor() time.Duration {
	if d.ClaimFor > 0 {
		return d.ClaimFor
	}
	return DefaultClaimFor
}

func (d *Drainer) log() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}

// newOwner returns a claim owner unique to one drain.
func newOwner() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Drain delivers the row's pending effects to target, strictly in order,
// until none is left, one fails (Report.Undelivered; the error is nil: a
// failed delivery is an outcome, not a failure of the drain) or the head is
// claimed by another live drainer (Report.Busy). The error reports a
// DynamoDB failure or a malformed item.
func (d *Drainer) Drain(ctx context.Context, rowKey abi.Item, target deliver.Target) (Report, error) {
	return d.drain(ctx, Report{Key: rowKey}, target)
}

// drain is Drain, adding to rep.
func (d *Drainer) drain(ctx context.Context, rep Report, target deliver.Target) (Report, error) {
	rowKey := rep.Key
	owner := newOwner()
	for {
		head, err := d.head(ctx, rowKey)
		if err != nil || head == nil {
			return rep, err
		}
		key := itemKey(head, d.Layout.KeyAttrs)
		now := d.now()
		if claimedBy(head, now) != "" {
			handed, err := d.handOver(ctx, key, head)
			if err != nil {
				return rep, err
			}
			if handed {
				d.noteBusy(ctx, rowKey, head, now)
				rep.Busy = true
				return rep, nil
			}
			continue // delivered, released or expired meanwhile: look again
		}
		claimed, err := d.claim(ctx, key, owner, now)
		if err != nil {
			return rep, err
		}
		if !claimed { // delivered and deleted, or claimed, meanwhile: look again
			continue
		}
		fx, err := d.Effect(head)
		if err != nil {
			return rep, err
		}
		if err := target.Deliver(ctx, fx); err != nil {
			d.release(ctx, key, owner)
			d.notDelivered(ctx, rowKey, fx, err)
			rep.Undelivered = &Undelivered{Effect: fx, Err: err}
			return rep, nil
		}
		// Delivered: the item goes, even if the claim expired and another
		// drainer took it over meanwhile (it must not deliver it again).
		if err := d.DB.DeleteItem(ctx, store.Delete{Table: d.Layout.Table, Key: key}); err != nil {
			return rep, fmt.Errorf("deleting the delivered effect of row %s: %w", keys.String(rowKey), err)
		}
		rep.Delivered = append(rep.Delivered, fx)
	}
}

// head reads the row's oldest outbox item, strongly consistent; nil when
// there is none.
func (d *Drainer) head(ctx context.Context, rowKey abi.Item) (abi.Item, error) {
	q, err := d.Layout.HeadQuery(rowKey)
	if err != nil {
		return nil, err
	}
	page, err := d.DB.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("reading the outbox head of row %s from %s: %w", keys.String(rowKey), d.Layout.Table, err)
	}
	if len(page.Items) == 0 {
		return nil, nil
	}
	return page.Items[0], nil
}

// claimedBy returns the owner of a live claim on the item ("" when it has
// none or it expired).
func claimedBy(it abi.Item, now time.Time) string {
	owner, ok := it[apply.OutboxAttrOwner]
	if !ok {
		return ""
	}
	until, _ := strconv.ParseInt(it[apply.OutboxAttrUntil].Str, 10, 64)
	if until <= now.UnixMilli() {
		return ""
	}
	return owner.Str
}

// claim takes the item for owner until now + ClaimFor when it exists and
// holds no live claim; false when it does not (any more).
func (d *Drainer) claim(ctx context.Context, key abi.Item, owner string, now time.Time) (bool, error) {
	until := now.Add(d.claimFor()).UnixMilli()
	_, err := d.DB.UpdateItem(ctx, store.Update{
		Table: d.Layout.Table, Key: key, Expr: "SET #o = :o, #u = :u",
		Names:  map[string]string{"#o": apply.OutboxAttrOwner, "#u": apply.OutboxAttrUntil, "#k": d.Layout.KeyAttrs[0]},
		Values: map[string]abi.Value{":o": abi.S(owner), ":u": abi.N(strconv.FormatInt(until, 10)), ":now": abi.N(strconv.FormatInt(now.UnixMilli(), 10))},
		Cond:   &store.Cond{Expr: "attribute_exists(#k) AND (attribute_not_exists(#u) OR #u <= :now)"},
	})
	if errors.Is(err, store.ErrConditionFailed) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claiming an outbox effect in %s: %w", d.Layout.Table, err)
	}
	return true, nil
}

// handOver marks head, which another drainer holds a live claim on, as
// awaited: its holder learns of it when it deletes the item and drains the
// row on. false: the item is gone or its claim changed meanwhile.
func (d *Drainer) handOver(ctx context.Context, key, head abi.Item) (bool, error) {
	_, err := d.DB.UpdateItem(ctx, store.Update{
		Table: d.Layout.Table, Key: key, Expr: "SET #w = :w",
		Names:  map[string]string{"#w": apply.OutboxAttrWaiter, "#o": apply.OutboxAttrOwner, "#u": apply.OutboxAttrUntil},
		Values: map[string]abi.Value{":w": abi.Bool(true), ":o": head[apply.OutboxAttrOwner], ":u": head[apply.OutboxAttrUntil]},
		Cond:   &store.Cond{Expr: "#o = :o AND #u = :u"},
	})
	if errors.Is(err, store.ErrConditionFailed) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("handing an outbox effect of %s over to its drainer: %w", d.Layout.Table, err)
	}
	return true, nil
}

// release gives up owner's claim so the next drain retries at once; a
// failure only means the claim expires instead.
func (d *Drainer) release(ctx context.Context, key abi.Item, owner string) {
	_, err := d.DB.UpdateItem(ctx, store.Update{
		Table: d.Layout.Table, Key: key, Expr: "REMOVE #o, #u",
		Names:  map[string]string{"#o": apply.OutboxAttrOwner, "#u": apply.OutboxAttrUntil},
		Values: map[string]abi.Value{":o": abi.S(owner)},
		Cond:   &store.Cond{Expr: "#o = :o"},
	})
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		d.log().Warn("releasing an outbox claim failed; it expires instead", "err", err)
	}
}

func itemKey(it abi.Item, attrs []string) abi.Item {
	k := abi.Item{}
	for _, a := range attrs {
		k[a] = it[a]
	}
	return k
}

// Effect returns the effect an outbox item holds, as a target receives it.
func (d *Drainer) Effect(it abi.Item) (deliver.Effect, error) {
	rk, ok := it[apply.OutboxAttrRowKey]
	if !ok || rk.Kind != abi.KindM {
		return deliver.Effect{}, fmt.Errorf("%w: item %s of %s lacks %s", ErrNoRowKey, keys.String(itemKey(it, d.Layout.KeyAttrs)), d.Layout.Table, apply.OutboxAttrRowKey)
	}
	ver, err := strconv.ParseUint(it[apply.OutboxAttrVersion].Str, 10, 64)
	if err != nil {
		return deliver.Effect{}, fmt.Errorf("outbox item %s of %s: version %q: %w", keys.String(itemKey(it, d.Layout.KeyAttrs)), d.Layout.Table, it[apply.OutboxAttrVersion].Str, err)
	}
	idx, err := strconv.Atoi(it[apply.OutboxAttrIndex].Str)
	if err != nil {
		return deliver.Effect{}, fmt.Errorf("outbox item %s of %s: index %q: %w", keys.String(itemKey(it, d.Layout.KeyAttrs)), d.Layout.Table, it[apply.OutboxAttrIndex].Str, err)
	}
	return deliver.Effect{
		Projection: d.Layout.Projection, Stream: it[apply.OutboxAttrStream].Str, StreamID: it[apply.OutboxAttrStreamID].Str,
		Version: ver, Index: idx, Key: rk.Map, Value: it[apply.OutboxAttrValue],
	}, nil
}
