package host

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/batch"
	"github.com/dynafold/dynafold/internal/keys"
)

// WhatIfInput is what WhatIf folds: captured change-feed records, or one
// stream instance (every event of it). Exactly one of Records and StreamID
// is set.
type WhatIfInput struct {
	Records  []Record // a captured batch (host capture, a Lambda event file)
	StreamID string   // a stream instance, folded from version 1 to its head
}

// WhatIfRow is one row a candidate plugin would write, beside the row the
// table holds now.
type WhatIfRow struct {
	Key     abi.Item // the row's key
	Would   abi.Item // the row the candidate would write (nil: removed, or failed)
	Removed bool     // the candidate would remove the row
	Err     error    // the candidate failed the row: it would write nothing
	Current abi.Item // the row in the table now (nil: none)
	// Changes lists the attributes that differ between Current and Would,
	// sorted, as "name: CURRENT → WOULD" ("-" for absent); the createdAt and
	// writtenBy attributes, which the host sets, are left out.
	Changes []string
}

// WhatIf folds events through a candidate plugin as the projection would,
// writing nothing: each row touched is folded from its stream's first event
// (the stored events before the given ones are read from the event store),
// as if the read model were empty, and returned beside the row the table
// holds now. plugin is a .wasm path (relative to the configuration file)
// or "native:<name>", loaded for this call and closed when it returns; calls
// must not overlap with Close. Rows come back sorted by key.
func (h *Host) WhatIf(ctx context.Context, projection, plugin string, in WhatIfInput) ([]WhatIfRow, error) {
	if _, err := h.engine(projection); err != nil {
		return nil, err
	}
	if (in.Records == nil) == (in.StreamID == "") {
		return nil, errors.New("what-if: give either records or a stream id")
	}
	return h.whatIf(ctx, projection, plugin, func(e *apply.Engine) ([]apply.Outcome, error) {
		if in.StreamID != "" {
			return e.Rebuild(ctx, in.StreamID)
		}
		proc, err := batch.New(h.dopts, []*apply.Engine{e}, nil)
		if err != nil {
			return nil, err
		}
		res, err := proc.Process(ctx, internalRecords(in.Records))
		if err != nil {
			return nil, err
		}
		pr := res.Projections[projection]
		for _, kf := range pr.KeyFailures {
			return nil, fmt.Errorf("the candidate's key failed on %s %s v%d: %v", kf.Event.Stream, kf.Event.StreamID, kf.Event.Version, kf.Err)
		}
		return pr.Rows, nil
	})
}

// whatIf loads the candidate plugin over a store that writes nothing and
// reads the projection's table as empty, folds through it what fold folds,
// and returns each row beside the row the table holds now, sorted by key.
func (h *Host) whatIf(ctx context.Context, projection, plugin string, fold func(e *apply.Engine) ([]apply.Outcome, error)) ([]WhatIfRow, error) {
	live, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	pc := h.cfg.projection(projection)
	pc.Plugin, pc.HotSwap, pc.Shadow = plugin, nil, nil
	loaded := len(h.logics)
	defer func() { // the candidate serves this call only
		for _, l := range h.logics[loaded:] {
			_ = l.Close(ctx)
		}
		h.logics = h.logics[:loaded]
	}()
	e, err := h.newEngine(ctx, pc, h.opts, newDryStore(h.db, pc.Key, pc.Table))
	if err != nil {
		return nil, fmt.Errorf("candidate plugin %s: %w", plugin, err)
	}
	rows, err := fold(e)
	if err != nil {
		return nil, err
	}
	ignore := map[string]bool{}
	for _, a := range pc.provenanceAttrs() {
		ignore[a] = true
	}
	out := make([]WhatIfRow, 0, len(rows))
	for _, o := range rows {
		cur, _, err := live.Row(ctx, o.Key)
		if err != nil {
			return nil, fmt.Errorf("reading row %s: %w", keys.String(o.Key), err)
		}
		r := WhatIfRow{Key: o.Key, Removed: o.Removed, Err: o.Err, Current: cur}
		var re *apply.RowError
		if errors.As(r.Err, &re) {
			r.Err = re.Cause
		}
		if o.Err == nil && !o.Removed {
			r.Would = o.State
		}
		if o.Err == nil {
			r.Changes = ItemDiff(cur, r.Would, ignore)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return keys.String(out[i].Key) < keys.String(out[j].Key) })
	return out, nil
}
