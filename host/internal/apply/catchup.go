package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dynafold/dynafold/abi"
)

// ErrNoRow is returned by CatchUp when no event of the stream instance
// addresses a row.
var ErrNoRow = errors.New("no event of the stream addresses a row")

// ErrNoEvents is returned by a catch-up or a rebuild of a stream instance
// that has no event at all: an id or a source that names nothing.
var ErrNoEvents = errors.New("no events")

// CatchUp brings the row of the latest event of the first source's stream
// instance streamID that addresses a row up to its head: CatchUpInstance
// of that instance.
func (e *Engine) CatchUp(ctx context.Context, streamID string) (Outcome, error) {
	return e.CatchUpInstance(ctx, InstanceRef{Source: e.p.Sources[0].Name, StreamID: streamID})
}

// CatchUpInstance brings the row of the stream instance's latest event
// that addresses a row up to the head: for a stream whose last event was
// dead-lettered. The row is caught up as CatchUpRow does, from every
// instance its checkpoints know and this one, so the row's other sources
// are brought up too and never lose anything. It returns that row's
// outcome; ErrNoRow when no event of the instance addresses a row.
func (e *Engine) CatchUpInstance(ctx context.Context, ref InstanceRef) (Outcome, error) {
	evs, ks, err := e.keyedEvents(ctx, ref)
	if err != nil {
		return Outcome{}, fmt.Errorf("catch-up of %s: %w", ref, err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if ks[i].Key == nil || ks[i].Error != nil {
			continue
		}
		keyStr, err := e.checkKey(ks[i].Key)
		if err != nil {
			return Outcome{}, fmt.Errorf("catch-up of %s v%d: %w", ref, evs[i].Version, err)
		}
		rw := newRepair([]InstanceRef{ref}, true)
		rw.seed(ref, evs, ks, keyStr)
		o := e.repairRow(ctx, ks[i].Key, keyStr, rw, false)
		return o, o.Err
	}
	return Outcome{}, fmt.Errorf("catch-up of %s: %w", ref, ErrNoRow)
}

// Rebuild re-derives every row of the first source's stream instance
// streamID: RebuildInstance of that instance.
func (e *Engine) Rebuild(ctx context.Context, streamID string) ([]Outcome, error) {
	return e.RebuildInstance(ctx, InstanceRef{Source: e.p.Sources[0].Name, StreamID: streamID})
}

// RebuildInstance re-derives every row the stream instance feeds (the rows
// its events address through the source's key): for backfills, a new read
// model over existing streams, or a changed evolve. Each row is rebuilt as
// RebuildRowAll does, from every instance that feeds it (its checkpoints,
// Projection.SourcesOf and this one), so the row's other sources keep their
// part and their checkpoints; a row whose instances cannot all be named is
// refused (ErrUnnamedInstance), and the others are still rebuilt.
//
// Each row is written once, conditioned on the row as read; events the
// row had already considered are folded without their effects and not
// reported, so a rebuild never replays side effects, and no checkpoint is
// written below the one the row held (see RebuildRow).
func (e *Engine) RebuildInstance(ctx context.Context, ref InstanceRef) ([]Outcome, error) {
	evs, ks, err := e.keyedEvents(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("rebuild of %s: %w", ref, err)
	}
	return e.eachRow(ref, evs, ks, func(key abi.Item, keyStr string) Outcome {
		rw, err := e.allInstances(ctx, key, keyStr, []InstanceRef{ref})
		if err != nil {
			return e.failed(&rowWork{key: key, keyStr: keyStr}, err)
		}
		rw.seed(ref, evs, ks, keyStr)
		return e.repairRow(ctx, key, keyStr, rw, true)
	})
}

// CatchUpRows brings every row the stream instance feeds (the rows its
// events address) up to the head, each as CatchUpRow does: from every
// instance its checkpoints know and this one, so a row left behind by a
// record given up is brought up even when the stream's latest event
// addresses another row. A row already at the head is not written; its
// outcome reports the checkpoints it holds. Rows are caught up
// concurrently (the projection's row concurrency); the error joins the
// rows' failures and the events whose key failed.
func (e *Engine) CatchUpRows(ctx context.Context, ref InstanceRef) ([]Outcome, error) {
	evs, ks, err := e.keyedEvents(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("catch-up of %s: %w", ref, err)
	}
	outs, err := e.eachRow(ref, evs, ks, func(key abi.Item, keyStr string) Outcome {
		rw := newRepair([]InstanceRef{ref}, true)
		rw.seed(ref, evs, ks, keyStr)
		return e.repairRow(ctx, key, keyStr, rw, false)
	})
	if len(outs) == 0 && err == nil {
		return nil, fmt.Errorf("catch-up of %s: %w", ref, ErrNoRow)
	}
	return outs, err
}

// eachRow runs f on every row the instance's events address, at most the
// projection's row concurrency at once, and returns their outcomes in the
// order of the first event addressing each, with the failures joined.
func (e *Engine) eachRow(ref InstanceRef, evs []abi.Event, ks []abi.KeyResult, f func(key abi.Item, keyStr string) Outcome) ([]Outcome, error) {
	rows, errs := e.rowsOf(ref, evs, ks)
	outs := make([]Outcome, len(rows))
	sem := make(chan struct{}, e.p.Rows)
	var wg sync.WaitGroup
	for i, key := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outs[i] = f(key, keyString(key))
		}()
	}
	wg.Wait()
	for i := range outs {
		if outs[i].Err != nil {
			errs = append(errs, outs[i].Err)
		}
	}
	return outs, errors.Join(errs...)
}

// RowsOf returns the keys of the rows the stream instance feeds, in the
// order of its first event addressing each.
func (e *Engine) RowsOf(ctx context.Context, ref InstanceRef) ([]abi.Item, error) {
	evs, ks, err := e.keyedEvents(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("rows of %s: %w", ref, err)
	}
	rows, errs := e.rowsOf(ref, evs, ks)
	return rows, errors.Join(errs...)
}

// keyedEvents reads every event of the instance and keys them.
func (e *Engine) keyedEvents(ctx context.Context, ref InstanceRef) ([]abi.Event, []abi.KeyResult, error) {
	if err := e.checkRefs([]InstanceRef{ref}); err != nil {
		return nil, nil, err
	}
	src := e.p.Sources[e.sourceIndex(ref.Source)]
	evs, err := e.events.ReadFrom(ctx, src.Stream, ref.StreamID, 0, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s %s: %w", src.Stream, ref.StreamID, err)
	}
	if len(evs) == 0 {
		return nil, nil, fmt.Errorf("%w: stream %s has no event with id %q", ErrNoEvents, src.Stream, ref.StreamID)
	}
	ks, err := e.keys(ctx, src.Name, evs)
	if err != nil {
		return nil, nil, fmt.Errorf("keying %s %s: %w", src.Stream, ref.StreamID, err)
	}
	return evs, ks, nil
}

// rowsOf returns the distinct rows the events address, and an error for
// each event whose key failed.
func (e *Engine) rowsOf(ref InstanceRef, evs []abi.Event, ks []abi.KeyResult) ([]abi.Item, []error) {
	var rows []abi.Item
	var errs []error
	seen := map[string]bool{}
	for i, k := range ks {
		if k.Error != nil {
			errs = append(errs, fmt.Errorf("key failed on %s v%d: %w", ref, evs[i].Version, k.Error))
			continue
		}
		if k.Key == nil {
			continue
		}
		s, err := e.checkKey(k.Key)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s v%d: %w", ref, evs[i].Version, err))
			continue
		}
		if !seen[s] {
			seen[s] = true
			rows = append(rows, k.Key)
		}
	}
	return rows, errs
}

// Apply applies one event: ApplyBatch of that event, with the
// row's failure as the error. The outcome is nil when the event addresses
// no row.
func (e *Engine) Apply(ctx context.Context, ev Input) (*Outcome, error) {
	res := e.ApplyBatch(ctx, []Input{ev})
	for _, kf := range res.KeyFailures {
		return nil, fmt.Errorf("key failed on %s %s v%d: %w", kf.Event.Stream, kf.Event.StreamID, kf.Event.Version, kf.Err)
	}
	if len(res.Rows) == 0 {
		return nil, nil
	}
	return &res.Rows[0], res.Rows[0].Err
}

// Row reads the projection's row by key, strongly consistent. A tombstone
// is reported as absent, like a row that was never written: ok is false
// and the item nil.
func (e *Engine) Row(ctx context.Context, key abi.Item) (item abi.Item, ok bool, err error) {
	it, err := e.db.GetItem(ctx, e.p.Table, key)
	if err != nil || it == nil || IsTombstone(it) {
		return nil, false, err
	}
	return it, true, nil
}
