package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/keys"
)

// Deliver delivers what a row write just committed (apply.Committed), in
// order, at least once, as Drain would, in fewer round trips: the write
// committed its items already claimed and read the row's outbox head beside
// it, so no item is read or claimed again, and each delivered item's delete
// overlaps the next delivery.
//
// When the head read found an older effect still pending (or failed), the
// write's claims are released and the row drained as Drain does, older
// effects first. When the claim runs short (half of ClaimFor left), the
// rest goes the same way. When another drainer handed the row over to this
// one (a delete found the item awaited), the row is drained on after these
// items.
func (d *Drainer) Deliver(ctx context.Context, c apply.Committed, target deliver.Target) (Report, error) {
	rep := Report{Key: c.Key}
	if len(c.Items) == 0 {
		return rep, nil
	}
	head, err := c.Head()
	if err != nil || (head != nil && d.older(head, c.Items[0])) {
		d.releaseAll(ctx, c.Items, c.Owner)
		return d.drain(ctx, rep, target)
	}
	// Each delivered item's delete overlaps the next item's delivery, one
	// at a time: an item is delivered only once the delete before the one
	// in flight has succeeded, so a store that stops answering (an outage,
	// a throttled table) stops the deliveries after at most two items whose
	// deletes failed. Those two are delivered again later (at least once);
	// the rest stay claimed for the sweep, not sent out twice.
	var (
		inflight chan deleted // the previous item's delete, nil when none
		awaited  bool
	)
	settle := func() error {
		if inflight == nil {
			return nil
		}
		r := <-inflight
		inflight = nil
		awaited = awaited || r.awaited
		return r.err
	}
	for i, it := range c.Items {
		if !d.now().Before(c.Until.Add(-d.claimFor() / 2)) {
			// The claim runs short: the ordinary drain claims the rest anew.
			d.releaseAll(ctx, c.Items[i:], c.Owner)
			if err := settle(); err != nil {
				return rep, err
			}
			return d.drain(ctx, rep, target)
		}
		fx, err := d.Effect(it)
		if err == nil {
			err = target.Deliver(ctx, fx)
			if err != nil {
				d.notDelivered(ctx, c.Key, fx, err)
				rep.Undelivered = &Undelivered{Effect: fx, Err: err}
				err = nil
			}
		}
		if err != nil || rep.Undelivered != nil {
			d.releaseAll(ctx, c.Items[i:], c.Owner)
			return rep, errors.Join(settle(), err)
		}
		rep.Delivered = append(rep.Delivered, fx)
		if err := settle(); err != nil {
			// The store did not take the last delete: this item stays
			// claimed (delivered, not deleted) and so do the rest, which
			// the sweep delivers once their claim ends.
			return rep, err
		}
		key := itemKey(it, d.Layout.KeyAttrs)
		if i == len(c.Items)-1 {
			// The last item's delete overlaps nothing: it runs here.
			r := d.deleteOne(ctx, key, c.Key)
			awaited = awaited || r.awaited
			if r.err != nil {
				return rep, r.err
			}
			continue
		}
		ch := make(chan deleted, 1)
		go func() { ch <- d.deleteOne(ctx, key, c.Key) }()
		inflight = ch
	}
	if awaited {
		return d.drain(ctx, rep, target)
	}
	return rep, nil
}

// deleted is the outcome of a delivered item's delete.
type deleted struct {
	awaited bool
	err     error
}

func (d *Drainer) deleteOne(ctx context.Context, key, rowKey abi.Item) deleted {
	awaited, err := d.deleteDelivered(ctx, key, rowKey)
	return deleted{awaited: awaited, err: err}
}

// older reports whether head sorts before item: an effect committed by an
// earlier write.
func (d *Drainer) older(head, item abi.Item) bool {
	r := d.Layout.KeyAttrs[1]
	return head[r].Str < item[r].Str
}

// deleteDelivered deletes a delivered item on the condition that no other
// drainer awaits it; when one does, it deletes it all the same and reports
// the hand-over (awaited).
func (d *Drainer) deleteDelivered(ctx context.Context, key, rowKey abi.Item) (awaited bool, err error) {
	err = d.DB.DeleteItem(ctx, store.Delete{Table: d.Layout.Table, Key: key,
		Cond: &store.Cond{Expr: "attribute_not_exists(#w)", Names: map[string]string{"#w": apply.OutboxAttrWaiter}}})
	if errors.Is(err, store.ErrConditionFailed) {
		awaited = true
		err = d.DB.DeleteItem(ctx, store.Delete{Table: d.Layout.Table, Key: key})
	}
	if err != nil {
		return awaited, fmt.Errorf("deleting the delivered effect of row %s: %w", keys.String(rowKey), err)
	}
	return awaited, nil
}

// releaseAll gives up owner's claims on items, all at once.
func (d *Drainer) releaseAll(ctx context.Context, items []abi.Item, owner string) {
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.release(ctx, itemKey(it, d.Layout.KeyAttrs), owner)
		}()
	}
	wg.Wait()
}
