package apply

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
)

// Committed is what a row write committed to the outbox, handed to
// Outbox.Deliver right after the write: the items, in commit order, claimed
// by Owner until Until, so the drainer delivers them without a read and a
// claim of its own; and the read of the row's outbox head, made beside the
// write once the row was read, which tells whether older effects are still
// pending and must go first.
type Committed struct {
	Key   abi.Item   // the row
	Items []abi.Item // the outbox items as committed, in order
	Owner string     // the claim they were committed under
	Until time.Time  // the claim's end
	head  <-chan headRead
}

type headRead struct {
	item abi.Item
	err  error
}

// Head waits for the read of the row's outbox head made beside the write
// and returns the item it found: nil when the outbox was empty, one of
// Items when no older effect is pending, else the oldest pending one.
func (c Committed) Head() (abi.Item, error) {
	r := <-c.head
	return r.item, r.err
}

// claim is the claim a write commits its outbox items under, for
// Outbox.Deliver, with the head read started beside the write; the zero
// claim (no Deliver) marks nothing.
type claim struct {
	owner string
	until time.Time
	head  chan headRead
}

// newClaim starts the read of the row's outbox head and returns the claim
// the row's outbox items are to be committed under; without Deliver, a
// claim that marks nothing and reads nothing.
func (e *Engine) newClaim(ctx context.Context, l OutboxLayout, key abi.Item) claim {
	o := e.p.Outbox
	if o == nil || o.Deliver == nil || o.ClaimFor <= 0 {
		return claim{}
	}
	c := claim{owner: newOwner(), until: e.p.Now().Add(o.ClaimFor), head: make(chan headRead, 1)}
	go func() {
		q, err := l.HeadQuery(key)
		if err != nil {
			c.head <- headRead{err: err}
			return
		}
		page, err := e.db.Query(ctx, q)
		var it abi.Item
		if err == nil && len(page.Items) > 0 {
			it = page.Items[0]
		}
		c.head <- headRead{item: it, err: err}
	}()
	return c
}

// mark makes an outbox item claimed.
func (c claim) mark(item abi.Item) {
	if c.owner == "" {
		return
	}
	item[OutboxAttrOwner] = abi.S(c.owner)
	item[OutboxAttrUntil] = abi.N(strconv.FormatInt(c.until.UnixMilli(), 10))
}

// committed returns what the write committed (nil without Deliver).
func (c claim) committed(key abi.Item, writes []store.Write) *Committed {
	if c.owner == "" {
		return nil
	}
	items := make([]abi.Item, len(writes))
	for i, w := range writes {
		items[i] = w.Put.Item
	}
	return &Committed{Key: key, Items: items, Owner: c.owner, Until: c.until, head: c.head}
}

// newOwner returns a claim owner unique to one write.
func newOwner() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// afterRow completes a row's outcome: the effects its write committed, and,
// when the outbox delivers on write, what the delivery delivered; with
// those of the steps written before it (steps.go).
func (e *Engine) afterRow(ctx context.Context, w *rowWork, o *Outcome) {
	if o.Err != nil || !o.Written {
		return
	}
	o.Enqueued, o.Delivered, o.Undelivered = e.deliverWrite(ctx, w)
	if s := w.steps; s != nil {
		o.Enqueued += s.enqueued
		o.Delivered += s.delivered
		o.Undelivered += s.undelivered
	}
}

// deliverWrite returns the effects the row's last write committed and,
// when the outbox delivers on write, delivers them.
func (e *Engine) deliverWrite(ctx context.Context, w *rowWork) (enqueued, delivered, undelivered int) {
	enqueued = w.enqueued
	ob := e.p.Outbox
	switch {
	case enqueued == 0 || ob == nil:
	case ob.Deliver != nil && w.committed != nil:
		delivered, undelivered = ob.Deliver(ctx, *w.committed)
	case ob.Drain != nil:
		delivered, undelivered = ob.Drain(ctx, w.key)
	}
	return enqueued, delivered, undelivered
}
