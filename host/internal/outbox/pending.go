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

// DefaultRows is how many rows DrainPending drains at a time when
// Drainer.Rows is 0.
const DefaultRows = 10

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

// DrainPending drains every row with pending effects (Pending), Rows rows
// at a time (default DefaultRows), and returns a report per row in the
// order Pending lists them. A DynamoDB error stops the sweep (the rows
// already started finish); a failed delivery only stops its own row.
func (d *Drainer) DrainPending(ctx context.Context, target deliver.Target) ([]Report, error) {
	rows, err := d.Pending(ctx)
	if err != nil {
		return nil, err
	}
	n := d.Rows
	if n <= 0 {
		n = DefaultRows
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]Report, len(rows))
	errs := make([]error, len(rows))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, k := range rows {
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = d.Drain(ctx, k, target)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	done := out[:0]
	for i := range out {
		if out[i].Key != nil {
			done = append(done, out[i])
		}
	}
	return done, errors.Join(errs...)
}
