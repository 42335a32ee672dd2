package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dynafold/dynafold/abi"
)

// gapRead is a gap-fill read kept across a row's lost-race retries: the
// events of (after, to] and which of them fold into this row. The event
// store is read only up to the last version the batch lacks: above it the
// batch brings every version, this row's events (in events) and the
// versions of other rows or none (in others).
type gapRead struct {
	after, to uint64
	events    []abi.Event
	mine      map[uint64]bool
	others    []uint64
	used      atomic.Bool // a fill took versions from it (prefetch.go)
}

// fillAllGaps fills the gaps of a row's runs (fillGaps), the event store
// reads of different instances at once: a row fed by several instances
// waits for one read, not one after the other. gaps keeps each instance's
// read across the row's retries.
func (e *Engine) fillAllGaps(ctx context.Context, w *rowWork, runs []*run, present presence, gaps map[instanceID]*gapRead) error {
	if len(runs) == 1 { // the usual row: no slices, no goroutine
		r := runs[0]
		g, err := e.fillGaps(ctx, w, r, present[r.id], gaps[r.id])
		return e.keepGap(gaps, r, g, err)
	}
	reads := make([]*gapRead, len(runs))
	errs := make([]error, len(runs))
	for i, r := range runs {
		reads[i] = gaps[r.id]
	}
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reads[i], errs[i] = e.fillGaps(ctx, w, r, present[r.id], reads[i])
		}()
	}
	wg.Wait()
	for i, r := range runs {
		if err := e.keepGap(gaps, r, reads[i], errs[i]); err != nil {
			return err
		}
	}
	return nil
}

// keepGap takes the result of run r's gap fill: a bad event item fails the
// run alone, another error the row; a read is kept for the row's retries.
func (e *Engine) keepGap(gaps map[instanceID]*gapRead, r *run, g *gapRead, err error) error {
	if errors.Is(err, ErrBadEventItem) {
		// the instance cannot fold past the item: it fails, alone
		r.failed, r.fold = err, nil
		return nil
	}
	if err != nil {
		return err
	}
	if g != nil {
		gaps[r.id] = g
	}
	return nil
}

// fillGaps makes r.fold hold every version c+1 … max of the instance that
// addresses this row, and r.other the versions of that range that address
// another row or none. It reads the event store only when the batch lacks a
// version, with one bounded, strongly consistent read, unless g (the
// instance's read of an earlier attempt) covers the range; it returns the
// read to keep (nil: none was needed).
func (e *Engine) fillGaps(ctx context.Context, w *rowWork, r *run, present versions, g *gapRead) (*gapRead, error) {
	mine := make(map[uint64]bool, len(r.fold))
	for _, ev := range r.fold {
		mine[ev.Version] = true
	}
	complete := true
	for v := r.c + 1; v <= r.max; v++ {
		if !present.has(v) {
			complete = false
			break
		}
	}
	if complete {
		for v := r.c + 1; v <= r.max; v++ {
			if !mine[v] {
				r.addOther(v)
			}
		}
		return g, nil
	}

	if g == nil || g.after > r.c || g.to < r.max {
		var err error
		if g, err = e.readGap(ctx, w, r, present, mine); err != nil {
			return nil, err
		}
	}
	g.used.Store(true)
	if cap(r.fold) < len(g.events) {
		r.fold = make([]abi.Event, 0, len(g.events))
	} else {
		r.fold = r.fold[:0]
	}
	for _, ev := range g.events {
		if ev.Version <= r.c || ev.Version > r.max {
			continue
		}
		if g.mine[ev.Version] {
			r.fold = append(r.fold, ev)
		} else {
			r.addOther(ev.Version)
		}
	}
	for _, v := range g.others {
		if v > r.c && v <= r.max {
			r.addOther(v)
		}
	}
	return g, nil
}

// readGap reads (c, hi] from the event store, hi the last version of
// (c, max] the batch lacks, and keys the events the batch did not bring;
// the versions above hi are the batch's (r.fold holds this row's, sorted).
func (e *Engine) readGap(ctx context.Context, w *rowWork, r *run, present versions, mine map[uint64]bool) (*gapRead, error) {
	hi := r.max
	for hi > r.c && present.has(hi) {
		hi--
	}
	evs, err := e.events.ReadFrom(ctx, r.src.Stream, r.id.streamID, r.c, hi)
	if err != nil {
		return nil, fmt.Errorf("gap-fill read of %s %s versions %d..%d: %w", r.src.Stream, r.id.streamID, r.c+1, hi, err)
	}
	want := r.c + 1
	for _, ev := range evs {
		if ev.Version != want {
			return nil, fmt.Errorf("gap-fill read of %s %s versions %d..%d: the event store returned version %d where %d was expected; an append commits versions contiguously, so the event store's items or layout are not what this host expects", r.src.Stream, r.id.streamID, r.c+1, hi, ev.Version, want)
		}
		want++
	}
	if want != hi+1 {
		return nil, fmt.Errorf("gap-fill read of %s %s versions %d..%d: the event store holds only up to version %d, yet version %d was delivered; check that the projection reads the table the change feed comes from", r.src.Stream, r.id.streamID, r.c+1, hi, want-1, r.max)
	}
	above := 0 // the batch's events of this row above hi
	for _, ev := range r.fold {
		if ev.Version > hi {
			above++
		}
	}
	g := &gapRead{after: r.c, to: r.max, events: slices.Grow(evs, above), mine: make(map[uint64]bool, len(r.fold)+len(evs))}
	for _, ev := range r.fold {
		if ev.Version > hi {
			g.events = append(g.events, ev)
			g.mine[ev.Version] = true
		}
	}
	for v := hi + 1; v <= r.max; v++ {
		if !mine[v] {
			g.others = append(g.others, v)
		}
	}
	var unknown []abi.Event
	for _, ev := range evs {
		if unknown == nil && !mine[ev.Version] && !present.has(ev.Version) {
			unknown = make([]abi.Event, 0, len(evs))
		}
		switch {
		case mine[ev.Version]:
			g.mine[ev.Version] = true
		case present.has(ev.Version):
			// brought by the batch and keyed to another row or none
		default:
			unknown = append(unknown, ev)
		}
	}
	if len(unknown) == 0 {
		return g, nil
	}
	keys, err := e.keys(ctx, r.id.source, unknown)
	if err != nil {
		return nil, fmt.Errorf("keying gap-filled events: %w", err)
	}
	for i, k := range keys {
		if k.Error != nil {
			return nil, fmt.Errorf("key failed on gap-filled %s %s v%d: %w", r.src.Stream, r.id.streamID, unknown[i].Version, k.Error)
		}
		if k.Key != nil && keyString(k.Key) == w.keyStr {
			g.mine[unknown[i].Version] = true
		}
	}
	return g, nil
}

// addOther records that version v of r's instance addresses another row
// or none.
func (r *run) addOther(v uint64) {
	if r.other == nil {
		r.other = map[uint64]bool{}
	}
	r.other[v] = true
}
