package outbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/keys"
)

// ErrNoIndex is the error of DrainPending on an outbox without a sparse
// index to find its pending rows.
var ErrNoIndex = errors.New("the outbox has no index")

// Pending lists the keys of the rows with pending effects, through the
// layout's sparse index (eventually consistent: an effect committed a
// moment ago may be missing, one delivered a moment ago may show), each row
// once, in index order.
func (d *Drainer) Pending(ctx context.Context) ([]abi.Item, error) {
	if d.Layout.Index == "" {
		return nil, fmt.Errorf("%w: projection %s: name the sparse index on %s / %s (outbox.index) to find rows with pending effects", ErrNoIndex, d.Layout.Projection, apply.OutboxIndexPK, apply.OutboxIndexSK)
	}
	q := store.Query{Table: d.Layout.Table, Index: d.Layout.Index, KeyCond: "#p = :p",
		Names: map[string]string{"#p": apply.OutboxIndexPK}, Values: map[string]abi.Value{":p": abi.S(d.Layout.Projection)}}
	seen := map[string]bool{}
	var rows []abi.Item
	for {
		page, err := d.DB.Query(ctx, q)
		if err != nil {
			return rows, fmt.Errorf("listing pending outbox effects through index %s of %s: %w", d.Layout.Index, d.Layout.Table, err)
		}
		for _, it := range page.Items {
			rk, ok := it[apply.OutboxAttrRowKey]
			if !ok || rk.Kind != abi.KindM {
				return rows, fmt.Errorf("%w: index %s of %s projects no %s; the index must project all attributes (or include %s)", ErrNoRowKey, d.Layout.Index, d.Layout.Table, apply.OutboxAttrRowKey, apply.OutboxAttrRowKey)
			}
			if k := keys.String(rk.Map); !seen[k] {
				seen[k] = true
				rows = append(rows, rk.Map)
			}
		}
		if page.LastKey == nil {
			return rows, nil
		}
		q.StartKey = page.LastKey
	}
}

// DrainPending drains every row with pending effects (Pending), one after
// the other, and returns a report per row. It stops at the first DynamoDB
// error; a failed delivery only stops its own row.
func (d *Drainer) DrainPending(ctx context.Context, target deliver.Target) ([]Report, error) {
	rows, err := d.Pending(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Report, 0, len(rows))
	for _, k := range rows {
		rep, err := d.Drain(ctx, k, target)
		out = append(out, rep)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
