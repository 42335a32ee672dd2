package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// ErrNoRow is returned by CatchUp when no event of the stream instance
// addresses a row.
var ErrNoRow = errors.New("no event of the stream addresses a row")

// CatchUp brings the row of the stream instance's latest event that
// addresses a row up to the stream's head: for a stream whose last
// event was dead-lettered. It returns that row's outcome.
func (e *Engine) CatchUp(ctx context.Context, streamID string) (Outcome, error) {
	src := e.p.Sources[0]
	evs, err := e.events.ReadFrom(ctx, src.Stream, streamID, 0, 0)
	if err != nil {
		return Outcome{}, fmt.Errorf("catch-up of %s %s: %w", src.Stream, streamID, err)
	}
	keys, err := e.keys(ctx, src.Name, evs)
	if err != nil {
		return Outcome{}, fmt.Errorf("catch-up of %s %s: %w", src.Stream, streamID, err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if keys[i].Key == nil || keys[i].Error != nil {
			continue
		}
		res := e.ApplyBatch(ctx, []Input{{Source: src.Name, Event: evs[i], Pos: -1}})
		if len(res.Rows) != 1 {
			return Outcome{}, fmt.Errorf("catch-up of %s %s v%d: %d rows", src.Stream, streamID, evs[i].Version, len(res.Rows))
		}
		return res.Rows[0], res.Rows[0].Err
	}
	return Outcome{}, fmt.Errorf("catch-up of %s %s: %w", src.Stream, streamID, ErrNoRow)
}

// Rebuild re-derives every row of the stream instance from version 1,
// ignoring the rows' state: for backfills, a new read model over
// existing streams, or a changed evolve. Each row is written once,
// conditioned on what was read (its checkpoint, or its revision). The
// outcomes carry no events, so a rebuild never replays side effects.
func (e *Engine) Rebuild(ctx context.Context, streamID string) ([]Outcome, error) {
	src := e.p.Sources[0]
	evs, err := e.events.ReadFrom(ctx, src.Stream, streamID, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("rebuild of %s %s: %w", src.Stream, streamID, err)
	}
	inputs := make([]Input, len(evs))
	for i, ev := range evs {
		inputs[i] = Input{Source: src.Name, Event: ev, Pos: -1}
	}
	res := e.applyBatch(ctx, inputs, true)
	var errs []error
	for i := range res.Rows {
		o := &res.Rows[i]
		for j := range o.Instances {
			in := &o.Instances[j]
			in.Applied, in.AlreadyApplied, in.Skipped, in.Rejected = nil, nil, nil, nil
		}
		if o.Err != nil {
			errs = append(errs, o.Err)
		}
	}
	for _, kf := range res.KeyFailures {
		errs = append(errs, fmt.Errorf("key failed on %s %s v%d: %w", kf.Event.Stream, kf.Event.StreamID, kf.Event.Version, kf.Err))
	}
	return res.Rows, errors.Join(errs...)
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
