package apply

import (
	"context"
	"fmt"
	"sort"

	"github.com/dynafold/dynafold/abi"
)

// folded is the result of folding a row's runs.
//
// What the fold decided for each run is kept on the run (run.decided,
// run.after, run.moved), set anew by each fold of the runs: no map per row
// keyed by instance.
type folded struct {
	resp       *abi.EvolveResponse
	write      bool      // something was applied or rejected
	by         string    // "name@version" of the plugin version that computed resp
	removedAny bool      // an event of the run removed the row (a later one may have started it again)
	last       abi.Event // the last event applied, in fold order: the one that made the item
}

// fold calls evolve once for the row's runs, in fold order: sources in
// declaration order, then stream id, then version. An instance whose event
// fails (not accepted by terminal) leaves the fold, which is recomputed
// without it. Instances that failed are the caller's to report: the row
// fails when every instance did (allFailed). The error is the call's own
// (the plugin could not be called, or broke the protocol).
func (e *Engine) fold(ctx context.Context, w *rowWork, row *rowState, runs []*run) (*folded, error) {
	state := row.item
	if w.rebuild {
		state = nil
	}
	for {
		// The engine stores the plugin's Item; of the state it needs only
		// whether it exists, so the plugin need not send it (ABI 1.1).
		req := &abi.EvolveRequest{Key: w.key, State: state, OmitState: true}
		n := 0
		for _, r := range runs {
			if r.failed == nil {
				n += len(r.fold)
			}
		}
		if n > 0 {
			req.Events = make([]abi.SourcedEvent, 0, n)
		}
		owner := make([]*run, 0, n) // the run of each event
		for _, r := range runs {
			if r.failed != nil {
				continue
			}
			for _, ev := range r.fold {
				req.Events = append(req.Events, abi.SourcedEvent{Source: r.id.source, Event: ev})
				owner = append(owner, r)
			}
		}
		if len(runs) == 1 {
			req.StreamID = runs[0].id.streamID
		}
		f := &folded{}
		for _, r := range runs {
			if cap(r.decided) < len(r.fold) {
				r.decided = make([]abi.Decision, 0, len(r.fold))
			}
			r.decided, r.after, r.moved = r.decided[:0], r.c, false
		}
		if len(req.Events) == 0 {
			return f, nil
		}
		resp, by, err := e.evolve(ctx, req)
		if err != nil {
			return nil, callError(e.plugin, by, runs, err)
		}
		if err := checkDecisions(e.plugin, resp, len(req.Events)); err != nil {
			return nil, callError(e.plugin, by, runs, err)
		}
		if n := len(resp.Decisions); resp.Decisions[n-1].Outcome == abi.Failed {
			r := owner[n-1]
			ev := req.Events[n-1].Event
			r.failed = &EventError{Event: ev, Err: resp.Decisions[n-1].Error}
			continue
		}
		if fallBack(runs, resp.Decisions, owner) {
			continue
		}
		f.resp, f.by = resp, by
		for i, d := range resp.Decisions {
			r := owner[i]
			r.decided = append(r.decided, d)
			if d.Remove && d.Outcome != abi.Applied {
				return nil, fmt.Errorf("plugin %s: evolve decision %d (%s v%d) removes the row but is %s; removeRow is an applied decision", e.plugin, i, req.Events[i].Event.Stream, req.Events[i].Event.Version, d.Outcome)
			}
			if d.Remove && e.p.Removal == nil {
				return nil, fmt.Errorf("plugin %s returned removeRow for %s v%d, but the projection has no removal configured; set removal in the projection's configuration to turn removed rows into tombstones", e.plugin, req.Events[i].Event.Stream, req.Events[i].Event.Version)
			}
			f.removedAny = f.removedAny || d.Remove
		}
		if resp.Removed && resp.State != nil {
			return nil, fmt.Errorf("plugin %s: evolve says the run removed the row but returned a state; a removed row has none", e.plugin)
		}
		if resp.State != nil && IsTombstone(resp.Item) {
			return nil, fmt.Errorf("plugin %s: to_item returned %s = %q, a tombstone's marker; a row's item cannot be a tombstone (return removeRow from evolve to remove the row)", e.plugin, MarkerAttr, resp.Item[MarkerAttr].Str)
		}
		if resp.Removed && !f.removedAny {
			return nil, fmt.Errorf("plugin %s: evolve says the run removed the row but no decision removes it", e.plugin)
		}
		if err := e.checkOutput(w, req, resp, f); err != nil {
			return nil, err
		}
		anyApplied := false
		for _, r := range runs {
			if r.failed != nil {
				continue
			}
			// The checkpoint stops at the last applied or rejected event
			// (skipped ones below it are covered), then passes the versions
			// of other rows right after it, up to the instance's next own
			// event: a skipped one, decided again later.
			c := r.c
			ds := r.decided
			for i, ev := range r.fold {
				switch ds[i].Outcome {
				case abi.Applied:
					anyApplied = true
					f.write, r.moved = true, true
					c = max(c, ev.Version)
				case abi.Rejected:
					f.write, r.moved = true, true
					c = max(c, ev.Version)
				}
			}
			for c < r.max && r.other[c+1] {
				c++
			}
			r.after = c
		}
		// Rejected events alone never create a row.
		if resp.State == nil && !anyApplied {
			f.write = false
		}
		return f, nil
	}
}

// fallBack moves every latest-mode run whose last tried event was rejected
// or skipped on to its next older event, and reports whether any did (the
// fold is then recomputed). Tried events stay in the run: a rejected or
// skipped event leaves the state unchanged, so the fold's other steps see
// the same state again.
func fallBack(runs []*run, ds []abi.Decision, owner []*run) bool {
	last := map[*run]abi.Outcome{}
	for i, d := range ds {
		last[owner[i]] = d.Outcome
	}
	moved := false
	for _, r := range runs {
		if r.failed != nil || len(r.older) == 0 {
			continue
		}
		if o := last[r]; o == abi.Rejected || o == abi.Skipped {
			n := len(r.older)
			r.fold = append(r.fold, r.older[n-1])
			r.older = r.older[:n-1]
			moved = true
		}
	}
	return moved
}

// allFailed reports whether every instance of the row failed: the row
// fails. An instance whose events were all applied already has not.
func allFailed(runs []*run) bool {
	for _, r := range runs {
		if r.failed == nil {
			return false
		}
	}
	return len(runs) > 0
}

// checkDecisions validates the shape of an evolve response.
func checkDecisions(plugin string, resp *abi.EvolveResponse, events int) error {
	n := len(resp.Decisions)
	switch {
	case n == 0 || n > events:
		return fmt.Errorf("plugin %s: evolve returned %d decisions for %d events; the ABI requires one per event, stopping only after a failed one", plugin, n, events)
	case n < events && resp.Decisions[n-1].Outcome != abi.Failed:
		return fmt.Errorf("plugin %s: evolve returned %d decisions for %d events without a failed one at the end", plugin, n, events)
	}
	for i, d := range resp.Decisions {
		switch d.Outcome {
		case abi.Applied, abi.Skipped:
		case abi.Rejected, abi.Failed:
			if d.Error == nil {
				return fmt.Errorf("plugin %s: evolve decision %d is %s without an error", plugin, i, d.Outcome)
			}
			if d.Outcome == abi.Failed && i != n-1 {
				return fmt.Errorf("plugin %s: evolve went on after a failed event (decision %d of %d)", plugin, i, n)
			}
		default:
			return fmt.Errorf("plugin %s: evolve decision %d has unknown outcome %d", plugin, i, d.Outcome)
		}
	}
	return nil
}

// instance returns the outcome of one run.
func (f *folded) instance(r *run) Instance {
	in := Instance{Source: r.id.source, StreamID: r.id.streamID, AlreadyApplied: r.already, Version: r.c, Err: r.failed}
	if r.failed != nil {
		return in
	}
	in.Superseded = r.older
	applied := 0
	for _, d := range r.decided {
		if d.Outcome == abi.Applied {
			applied++
		}
	}
	if applied > 0 {
		in.Applied = make([]abi.Event, 0, applied)
	}
	for i, d := range r.decided {
		ev := r.fold[i]
		switch d.Outcome {
		case abi.Applied:
			in.Applied = append(in.Applied, ev)
		case abi.Skipped:
			in.Skipped = append(in.Skipped, ev)
		case abi.Rejected:
			in.Rejected = append(in.Rejected, Rejection{Event: ev, Error: d.Error})
		}
	}
	// latest mode tries events newest first; report in version order
	sort.Slice(in.Skipped, func(i, j int) bool { return in.Skipped[i].Version < in.Skipped[j].Version })
	sort.Slice(in.Rejected, func(i, j int) bool { return in.Rejected[i].Event.Version < in.Rejected[j].Event.Version })
	return in
}

// callError wraps a failed plugin call's error with where the row's fold
// started: the first event of each run it folded.
func callError(plugin, by string, runs []*run, err error) error {
	ce := &CallError{Plugin: plugin, Err: err}
	if by != "" {
		ce.Plugin = by
	}
	for _, r := range runs {
		if r.failed == nil && len(r.fold) > 0 {
			ce.Starts = append(ce.Starts, r.fold[0])
		}
	}
	return ce
}
