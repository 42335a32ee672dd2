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

// maxSweeps bounds the index buckets queried at once by a sweep.
const maxSweeps = 32

// ErrNoIndex is the error of DrainPending on an outbox without a sparse
// index to find its pending rows.
var ErrNoIndex = errors.New("the outbox has no index")

// Pending lists the keys of the rows with pending effects, through the
// layout's sparse index (eventually consistent: an effect committed a
// moment ago may be missing, one delivered a moment ago may show). Every
// bucket of the index is queried, in parallel, and so is the hash key of
// effects committed before the index was bucketed; each row is listed
// once, bucket by bucket, in index order.
func (d *Drainer) Pending(ctx context.Context) ([]abi.Item, error) {
	hashes, err := d.indexKeys()
	if err != nil {
		return nil, err
	}
	lists := make([][]abi.Item, len(hashes))
	var mu sync.Mutex
	err = d.sweep(ctx, hashes, func(i int, rk, _ abi.Item, first bool) bool {
		if !first {
			return true
		}
		mu.Lock()
		lists[i] = append(lists[i], rk)
		mu.Unlock()
		return true
	})
	seen := map[string]bool{}
	var rows []abi.Item
	for _, l := range lists {
		for _, rk := range l {
			if k := keys.String(rk); !seen[k] {
				seen[k] = true
				rows = append(rows, rk)
			}
		}
	}
	return rows, err
}

// DrainPending drains every row with pending effects, Rows rows at a time
// (default DefaultRows), while the sweep of every index bucket (in
// parallel) is still finding them, and returns a report per row drained,
// in the order the drains finished. A DynamoDB error stops the sweep (the
// rows already started finish); a failed delivery only stops its own row.
func (d *Drainer) DrainPending(ctx context.Context, target deliver.Target) ([]Report, error) {
	return d.drainFound(ctx, target, func(_, _ abi.Item, first bool) bool { return first })
}

// drainFound sweeps the index and drains, Rows rows at a time, each row
// pick returns true for (it is called, concurrently, with every index item
// found: its row key, the item, and whether it is the first of its row in
// its hash key), each row once.
func (d *Drainer) drainFound(ctx context.Context, target deliver.Target, pick func(rowKey, item abi.Item, first bool) bool) ([]Report, error) {
	hashes, err := d.indexKeys()
	if err != nil {
		return nil, err
	}
	n := d.Rows
	if n <= 0 {
		n = DefaultRows
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		reports []Report
		errs    []error
		seen    = map[string]bool{}
		wg      sync.WaitGroup
	)
	rows := make(chan abi.Item)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range rows {
				rep, err := d.Drain(ctx, k, target)
				mu.Lock()
				reports = append(reports, rep)
				if err != nil {
					errs = append(errs, err)
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	sweepErr := d.sweep(ctx, hashes, func(_ int, rk, it abi.Item, first bool) bool {
		if !pick(rk, it, first) {
			return true
		}
		k := keys.String(rk)
		mu.Lock()
		dup := seen[k]
		seen[k] = true
		mu.Unlock()
		if dup {
			return true
		}
		select {
		case rows <- rk:
			return true
		case <-ctx.Done():
			return false
		}
	})
	close(rows)
	wg.Wait()
	if sweepErr != nil && len(errs) == 0 {
		errs = append(errs, sweepErr) // else the sweep stopped because a drain failed
	}
	return reports, errors.Join(errs...)
}

// indexKeys returns the index hash keys a sweep reads: every bucket, then
// the key of effects committed before the index was bucketed.
func (d *Drainer) indexKeys() ([]string, error) {
	l := d.Layout
	if l.Index == "" {
		return nil, fmt.Errorf("%w: projection %s: name the sparse index on %s / %s (outbox.index) to find rows with pending effects", ErrNoIndex, l.Projection, apply.OutboxIndexPK, apply.OutboxIndexSK)
	}
	n := max(l.Buckets, 1)
	out := make([]string, 0, n+1)
	for b := range n {
		out = append(out, l.BucketKey(b))
	}
	return append(out, l.LegacyIndexKey()), nil
}

// sweep queries every index hash key, at most maxSweeps at once, page by
// page, and calls found (concurrently) with the key's position, the row
// key of each item, the item, and whether it is the first item of its row
// in that hash key (the row's head, as the index saw it). A found that
// returns false stops the sweep; so does the first error, which sweep
// returns.
func (d *Drainer) sweep(ctx context.Context, hashes []string, found func(i int, rowKey, item abi.Item, first bool) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(hashes))
	sem := make(chan struct{}, maxSweeps)
	var wg sync.WaitGroup
	for i, h := range hashes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			if errs[i] = d.sweepKey(ctx, h, func(rk, it abi.Item, first bool) bool { return found(i, rk, it, first) }); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

// sweepKey pages through one index hash key.
func (d *Drainer) sweepKey(ctx context.Context, hash string, found func(rowKey, item abi.Item, first bool) bool) error {
	l := d.Layout
	q := store.Query{Table: l.Table, Index: l.Index, KeyCond: "#p = :p",
		Names: map[string]string{"#p": apply.OutboxIndexPK}, Values: map[string]abi.Value{":p": abi.S(hash)}}
	seen := map[string]bool{}
	for {
		page, err := d.DB.Query(ctx, q)
		if err != nil {
			return fmt.Errorf("listing pending outbox effects through index %s of %s: %w", l.Index, l.Table, err)
		}
		for _, it := range page.Items {
			rk, ok := it[apply.OutboxAttrRowKey]
			if !ok || rk.Kind != abi.KindM {
				return fmt.Errorf("%w: index %s of %s projects no %s; the index must project all attributes (or include %s)", ErrNoRowKey, l.Index, l.Table, apply.OutboxAttrRowKey, apply.OutboxAttrRowKey)
			}
			k := keys.String(rk.Map)
			first := !seen[k]
			seen[k] = true
			if !found(rk.Map, it, first) {
				return ctx.Err()
			}
		}
		if page.LastKey == nil {
			return nil
		}
		q.StartKey = page.LastKey
	}
}
