package outbox

import (
	"context"
	"fmt"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/keys"
)

// Skip removes the row's first n pending effects without delivering them,
// in order, each claimed first as a drain claims it (so an effect another
// drainer is delivering is not taken from under it: Report.Busy), and
// returns them in Report.Delivered, for the caller to keep. It is for an
// effect its consumer refuses for good, which otherwise holds back every
// later effect of its row.
func (d *Drainer) Skip(ctx context.Context, rowKey abi.Item, n int) (Report, error) {
	rep := Report{Key: rowKey}
	owner := newOwner()
	for len(rep.Delivered) < n {
		head, err := d.head(ctx, rowKey)
		if err != nil || head == nil {
			return rep, err
		}
		key := itemKey(head, d.Layout.KeyAttrs)
		now := d.now()
		if claimedBy(head, now) != "" {
			rep.Busy = true
			return rep, nil
		}
		claimed, err := d.claim(ctx, key, owner, now)
		if err != nil {
			return rep, err
		}
		if !claimed {
			continue
		}
		fx, err := d.Effect(head)
		if err != nil {
			d.release(ctx, key, owner)
			return rep, err
		}
		if err := d.DB.DeleteItem(ctx, store.Delete{Table: d.Layout.Table, Key: key}); err != nil {
			return rep, fmt.Errorf("deleting a skipped effect of row %s: %w", keys.String(rowKey), err)
		}
		rep.Delivered = append(rep.Delivered, fx)
		d.log().Warn("outbox effect skipped, not delivered", "row", keys.String(rowKey), "stream", fx.Stream, "streamId", fx.StreamID, "version", fx.Version, "index", fx.Index)
	}
	return rep, nil
}
