package apply

import (
	"context"
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// A fresh row is one whose every source instance brings its version 1 in
// the call: the first event of each of its streams. Unless another stream
// instance has written it already, such a row is absent, and reading it
// tells nothing the write's condition does not: a row folded from initial
// is written on condition that it does not exist, exactly the write a read
// that found it absent would lead to. So a fresh row is folded and written
// without the read, and the read comes only when that write's condition
// fails (the row exists: another instance or an earlier delivery wrote
// it). Then the row goes the usual way, from its GetItem, with the write
// that failed counted as one of its attempts: one round trip more than a
// read first, where a new entity saves one. Anything else a fold from
// initial ends in (nothing to write, a row that fails) rests on the row
// being absent too: the row is read, and the outcome is kept when it is
// absent (the plugin is not called twice), or the row applied again from
// what was read when it is not. No outcome rests on a guess.
//
// Projections whose new streams mostly meet existing rows (a row keyed by
// a customer fed by each new order) lose a round trip on every fresh row
// that way. Engine.doubt learns it: each fresh row whose condition failed
// raises it by doubtMiss, each one found absent (written without a read,
// or read and absent) lowers it by one, and fresh rows skip the read only
// while it is below doubtOff.
const (
	doubtMiss = 8
	doubtOff  = 16
	doubtMax  = 32
)

// freshRow reports whether w is a fresh row: a delivery (not a rebuild or a
// catch-up) whose every instance brings version 1.
func freshRow(w *rowWork) bool {
	if w.repair != nil || w.rebuild || len(w.instances.list) == 0 {
		return false
	}
	for _, ri := range w.instances.list {
		first := false
		for _, in := range ri.ins {
			if in.Event.Version == 1 {
				first = true
				break
			}
		}
		if !first {
			return false
		}
	}
	return true
}

// skipsRead reports whether fresh rows are written without a read now.
func (e *Engine) skipsRead() bool {
	return !e.p.ReadNewRows && e.doubt.Load() < doubtOff
}

// learn records what a fresh row turned out to be: absent or not.
func (e *Engine) learn(absent bool) { nudge(e.doubt, absent, doubtMiss, doubtMax) }

// applyFresh applies fresh row w without reading it first; when the row
// exists after all (or a fold from initial writes nothing), it reads the
// row and applies it the usual way.
func (e *Engine) applyFresh(ctx context.Context, w *rowWork, present presence) Outcome {
	gaps := map[instanceID]*gapRead{}
	o, lost := e.attempt(ctx, w, nil, present, gaps)
	if o.Written {
		e.learn(true)
		o.Attempts = 1
		return o
	}
	if w.steps != nil {
		// A long run's first step was written without a read (steps.go);
		// a later step failed, or lost a race and goes on from a read.
		e.learn(true)
		if !lost {
			o.Attempts = 1
			return o
		}
		item, err := e.db.GetItem(ctx, e.p.Table, w.key)
		if err != nil {
			return e.failedWith(w, fmt.Errorf("reading the row (GetItem on %s): %w", e.p.Table, err), 1)
		}
		return e.applyRowAfter(ctx, w, item, present, gaps, 1)
	}
	tried := 0
	if lost {
		e.learn(false)
		tried = 1 // the write whose condition failed
	}
	item, err := e.db.GetItem(ctx, e.p.Table, w.key)
	if err != nil {
		o = e.failedWith(w, fmt.Errorf("reading the row (GetItem on %s): %w", e.p.Table, err), max(tried, 1))
		o.Existed = lost
		return o
	}
	if !lost {
		e.learn(len(item) == 0)
		if len(item) == 0 {
			// absent: the fold from initial is what the read would have
			// led to (no write, or a failure), without calling the
			// plugin again
			o.Attempts = 1
			return o
		}
	}
	o = e.applyRowAfter(ctx, w, item, present, gaps, tried)
	o.Existed = lost
	return o
}

// readFresh records, for a fresh row read the usual way, whether it was
// absent.
func (e *Engine) readFresh(w *rowWork, item abi.Item) {
	if freshRow(w) {
		e.learn(len(item) == 0)
	}
}
