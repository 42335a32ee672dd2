package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// A row's write commits its effects in one transaction with the row, which
// holds at most MaxEffects of them. A run of events that carries more (a
// row far behind after a pause, a gap filled after quarantined records, a
// catch-up or a rebuild) is written in steps: the fold is cut after the
// longest prefix, in fold order, whose effects fit; that prefix is folded
// again from the row as read and written as an ordinary conditional write
// (the row at the prefix's checkpoint, its effects); then the row, as
// written, is planned, folded and written again for the rest. Each step is
// conditioned on the write before it, as any write is on the row read, so
// a crash or a lost race between two steps leaves the row at the last
// step's checkpoint with exactly the effects of the events up to it: the
// next delivery (or retry) goes on from there. A step folds the same
// events from the same row again when it is retried, so its effects keep
// their revision and index, their outbox item keys.
//
// An event whose effects alone do not fit one transaction cannot be
// written in any step: the row fails, naming it.
//
// A rebuild's first step folds, from the initial state, every event the
// row had considered already (their effects are not committed again) and
// of the others the prefix whose effects fit; the rest is caught up from
// the checkpoints that step wrote, in steps, as a catch-up would.

// stepped is what the steps written before the row's last write did.
type stepped struct {
	outs                             []Outcome // each step's outcome, in order
	enqueued, delivered, undelivered int
}

// cut keeps of the fold the longest prefix, in fold order, whose effects
// fit one transaction with the row, and reports whether it left anything
// out (the runs' folds are cut; the caller folds them again). Without an
// outbox, or when every effect fits, nothing is cut. A latest-mode run is
// kept or left out whole; on a rebuild it is always kept, as are the
// events the row had considered (they commit no effects), so that each
// instance's checkpoint the rebuild writes is one its events were folded
// to.
func (e *Engine) cut(w *rowWork, runs []*run) (bool, error) {
	if e.p.Outbox == nil {
		return false, nil
	}
	total := 0
	for r, i := range committing(w, runs) {
		if n := len(r.decided[i].Effects); n > MaxEffects {
			return false, fmt.Errorf("%w: %s %s v%d (%s) returned %d effects for row %s, and one transaction holds the row and at most %d, so no write of the row can commit them; have the plugin return at most %d effects for one event",
				ErrTooManyEffects, r.fold[i].Stream, r.fold[i].StreamID, r.fold[i].Version, r.fold[i].Type, n, w.keyStr, MaxEffects, MaxEffects)
		}
		total += len(r.decided[i].Effects)
	}
	if total <= MaxEffects {
		return false, nil
	}
	budget := MaxEffects
	latest := func(r *run) bool { return r.src.Mode == abi.ModeLatest }
	if w.rebuild {
		for _, r := range runs {
			if r.failed == nil && latest(r) {
				budget -= runEffects(w, r)
			}
		}
		if budget < 0 {
			return false, fmt.Errorf("%w: the rebuild of row %s folds the newest event of each of its latest-mode instances, whose effects alone are %d, and one transaction holds the row and at most %d", ErrTooManyEffects, w.keyStr, MaxEffects-budget, MaxEffects)
		}
	}
	full := false // the budget is spent: every later unit is left out
	for _, r := range runs {
		if r.failed != nil {
			continue
		}
		if latest(r) {
			if w.rebuild {
				continue // counted above, always kept
			}
			n := runEffects(w, r)
			if full || n > budget {
				full = true
				r.fold, r.older = nil, nil
				continue
			}
			budget -= n
			continue
		}
		keep := len(r.fold)
		for i, ev := range r.fold {
			if w.silentEffect(r.id, ev) {
				continue // the lowest versions: kept, at no cost
			}
			n := 0
			if i < len(r.decided) && r.decided[i].Outcome == abi.Applied {
				n = len(r.decided[i].Effects)
			}
			if full || n > budget {
				full, keep = true, i
				break
			}
			budget -= n
		}
		r.fold = r.fold[:keep]
	}
	return true, nil
}

// runEffects counts the effects a write of r would commit.
func runEffects(w *rowWork, r *run) int {
	c := 0
	for r, i := range committing(w, []*run{r}) {
		c += len(r.decided[i].Effects)
	}
	return c
}

// attempt plans, folds and writes the row: in one write, or, when its
// effects do not fit one transaction, in steps (see cut), each step's
// effects delivered right after its write as a row's are. retry is set
// when a write lost a race: the steps written before it stay, and the row
// is read again and goes on from the last.
func (e *Engine) attempt(ctx context.Context, w *rowWork, item abi.Item, present presence, gaps map[instanceID]*gapRead) (Outcome, bool) {
	for {
		w.more, w.stepItem = false, nil
		o, retry := e.attemptOnce(ctx, w, item, present, gaps)
		if retry || !w.more || o.Err != nil || w.stepItem == nil {
			if !retry {
				w.merge(&o)
			}
			return o, retry
		}
		// A step was written: deliver its effects, and go on from the row
		// as written. A rebuild's later steps are a catch-up from there.
		s := w.steps
		if s == nil {
			s = &stepped{}
			w.steps = s
		}
		if n := len(s.outs); n > 0 && reached(o) <= reached(s.outs[n-1]) {
			// only a plugin deciding the same events differently gets here
			return e.failed(w, errors.New("a step of the row's long run moved no checkpoint (its events' effects did not fit one transaction, so the run is written in steps); evolve must decide the same events from the same state the same way")), false
		}
		enq, del, und := e.deliverWrite(ctx, w)
		s.enqueued, s.delivered, s.undelivered = s.enqueued+enq, s.delivered+del, s.undelivered+und
		w.enqueued, w.committed = 0, nil
		s.outs = append(s.outs, o)
		item, w.stepItem = w.stepItem, nil
		w.rebuild = false
	}
}

// reached sums the instances' checkpoints after a step: each step moves
// one at least.
func reached(o Outcome) uint64 {
	var n uint64
	for _, in := range o.Instances {
		n += in.Version
	}
	return n
}

// merge makes the outcome of the row's last write the outcome of the
// call: with the events the steps before it applied, rejected and skipped,
// what the row had already from the first, and written when any step was.
func (w *rowWork) merge(o *Outcome) {
	s := w.steps
	if s == nil || len(s.outs) == 0 || o.Err != nil {
		return
	}
	byID := map[instanceID]int{}
	var all []Instance
	for _, so := range s.outs {
		for _, in := range so.Instances {
			id := instanceID{in.Source, in.StreamID}
			i, ok := byID[id]
			if !ok {
				byID[id] = len(all)
				all = append(all, in)
				continue
			}
			all[i] = chain(all[i], in)
		}
	}
	merged := make([]Instance, 0, len(o.Instances)+len(all))
	for _, in := range o.Instances {
		id := instanceID{in.Source, in.StreamID}
		if i, ok := byID[id]; ok {
			in = chain(all[i], in)
			delete(byID, id)
		}
		merged = append(merged, in)
	}
	for _, in := range all {
		if _, ok := byID[instanceID{in.Source, in.StreamID}]; ok {
			merged = append(merged, in)
		}
	}
	o.Instances = merged
	if !o.Written {
		last := s.outs[len(s.outs)-1]
		o.Written, o.Committed = true, last.Committed
	}
}

// chain is an instance's outcome over two consecutive steps: a skipped
// event the first step's checkpoint did not cover was decided again by the
// next.
func chain(a, b Instance) Instance {
	out := b
	out.AlreadyApplied = a.AlreadyApplied
	out.Applied = append(append([]abi.Event(nil), a.Applied...), b.Applied...)
	out.Rejected = append(append([]Rejection(nil), a.Rejected...), b.Rejected...)
	out.Superseded = append(append([]abi.Event(nil), a.Superseded...), b.Superseded...)
	var sk []abi.Event
	for _, ev := range a.Skipped {
		if ev.Version <= a.Version {
			sk = append(sk, ev)
		}
	}
	out.Skipped = append(sk, b.Skipped...)
	return out
}
