package apply

import (
	"context"
	"sync/atomic"

	"github.com/dynafold/dynafold/abi"
)

// A gap read waits for the row's read: only the row's checkpoint c says
// which versions below the batch's to read, (c, first). A row whose
// instances all begin the batch with their version 1 has no such gap; one
// whose instance begins higher, at most prefetchMax versions up, does
// when its checkpoint is below: a new row whose first events went to
// another batch (or shard), a projection deployed on a stream already
// running. For such rows the engine may read (0, first) beside the row's
// read, as the gap read of an absent row would, and the row takes the
// versions above its checkpoint from it: the round trip of the gap read
// goes, at the price of a read that was not needed when the row's
// checkpoint was at first-1 already (the usual case of a row that follows
// its stream: its batch begins where it stopped).
//
// So the engine reads ahead only while such reads are mostly needed:
// gapDoubt starts at gapDoubtStart (not reading ahead), falls by one for
// each row of that shape whose gap read was needed, rises by gapWaste for
// each whose was not, and the engine reads ahead while it is below
// gapDoubtStart.
const (
	prefetchMax   = 100
	gapDoubtStart = 8
	gapWaste      = 4
	gapDoubtMax   = 32
)

// gapShaped reports whether an instance of w begins the batch (its lowest
// version the batch brings, for any row) above version 1, at most
// prefetchMax versions up: whether its row's gap read, if any, is known
// to lie within (0, first).
func gapShaped(w *rowWork, present presence) bool {
	if w.repair != nil || w.rebuild {
		return false
	}
	for _, ri := range w.instances.list {
		vs := present[ri.id]
		if len(vs) > 0 && vs[0] > 1 && vs[0] <= prefetchMax+1 {
			return true
		}
	}
	return false
}

// readsAhead reports whether the engine reads gaps ahead now.
func (e *Engine) readsAhead() bool { return e.gapDoubt.Load() < gapDoubtStart }

// learnGap records whether a gap-shaped row's gap read was needed.
func (e *Engine) learnGap(needed bool) { nudge(e.gapDoubt, needed, gapWaste, gapDoubtMax) }

// nudge lowers d by one when good, else raises it by bad, within [0, top].
func nudge(d *atomic.Int32, good bool, bad, top int32) {
	for {
		v := d.Load()
		n := v + bad
		if good {
			n = v - 1
		}
		n = max(0, min(n, top))
		if n == v || d.CompareAndSwap(v, n) {
			return
		}
	}
}

// pendingGaps receives a row's gap reads made ahead (nil: none are).
type pendingGaps chan map[instanceID]*gapRead

// wait returns the gap reads made ahead, once made (nil: none).
func (p pendingGaps) wait() map[instanceID]*gapRead {
	if p == nil {
		return nil
	}
	return <-p
}

// aheadReads are a chunk's rows' pending gap reads, by position (nil: none).
type aheadReads []pendingGaps

func (a aheadReads) of(j int) pendingGaps {
	if a == nil {
		return nil
	}
	return a[j]
}

// readAhead starts the gap reads of the gap-shaped rows among ws, while
// the engine reads ahead.
func (e *Engine) readAhead(ctx context.Context, ws []*rowWork, present presence) aheadReads {
	if !e.readsAhead() {
		return nil
	}
	var out aheadReads
	for j, w := range ws {
		if !gapShaped(w, present) {
			continue
		}
		if out == nil {
			out = make(aheadReads, len(ws))
		}
		p := make(pendingGaps, 1)
		out[j] = p
		go func() {
			gaps := map[instanceID]*gapRead{}
			e.prefetchGaps(ctx, w, present, gaps)
			p <- gaps
		}()
	}
	return out
}

// applyRead applies a row read first, with its gap reads made ahead (if
// any), and learns from a gap-shaped row whether its gap read was needed.
func (e *Engine) applyRead(ctx context.Context, w *rowWork, item abi.Item, present presence, ahead pendingGaps) Outcome {
	gaps := ahead.wait()
	if gaps == nil {
		gaps = map[instanceID]*gapRead{}
	}
	o := e.applyRowAfter(ctx, w, item, present, gaps, 0)
	if gapShaped(w, present) {
		e.learnGap(gapNeeded(gaps))
	}
	return o
}

// prefetchGaps reads w's gaps as if the row were absent (checkpoints 0)
// into gaps, which the row's step then uses for any checkpoint it reads.
// What fails is left out: the row's step reads again what it needs.
func (e *Engine) prefetchGaps(ctx context.Context, w *rowWork, present presence, gaps map[instanceID]*gapRead) {
	row, err := e.readRow(nil)
	if err != nil {
		return
	}
	_, _ = e.plan(ctx, w, row, present, gaps, newPlacement())
	for _, g := range gaps {
		g.used.Store(false) // used by the row's step, or not needed
	}
}

// gapNeeded reports whether a gap read of the row's step was used.
func gapNeeded(gaps map[instanceID]*gapRead) bool {
	for _, g := range gaps {
		if g.used.Load() {
			return true
		}
	}
	return false
}
