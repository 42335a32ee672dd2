package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/eventstore"
)

// rowCheck is what one check of a row found.
type rowCheck struct {
	finding   *Finding
	pending   int  // events younger than the grace that address the row above its checkpoints
	unchecked bool // no instance could be named for the row
	err       error
}

// checkOnce checks a row as stored (nil: absent) against its events: the
// stored item was read at at, and every event older than at minus the
// grace that addresses it must be in it. With fresh, the events are read
// again after what was read before.
func (v *verifier) checkOnce(ctx context.Context, key, stored abi.Item, at time.Time, fresh bool) rowCheck {
	keyStr := keyText(key)
	cutoff := at.Add(-v.o.Grace)
	if since, ok := v.o.PausedSince[v.p.Name]; ok && !since.IsZero() && since.Add(-v.o.Grace).Before(cutoff) {
		cutoff = since.Add(-v.o.Grace) // what the pause held back is pending
	}
	tomb := apply.IsTombstone(stored)
	refs, err := v.instancesOf(ctx, key, keyStr, stored)
	if err != nil {
		return rowCheck{err: err}
	}
	if len(refs) == 0 {
		switch {
		case stored == nil || tomb:
			return rowCheck{}
		case v.sampled() || v.shared:
			return rowCheck{unchecked: true}
		}
		return rowCheck{finding: v.finding(FindingOrphan, key, stored, nil, refs)}
	}
	var (
		seeds           []apply.Keyed
		caps            = map[streamKey]uint64{}
		ahead           []AheadCheckpoint
		addressed, done bool // an event addresses the row; one older than the grace does
		pending         int
	)
	for _, ref := range refs {
		evs, ks, err := v.events(ctx, ref, fresh)
		if err != nil {
			return rowCheck{err: fmt.Errorf("reading the events of %s: %w", ref, err)}
		}
		c, _, _, err := v.e.CheckpointOf(stored, apply.InstanceRef(ref))
		if err != nil {
			return rowCheck{err: err}
		}
		var head uint64
		if len(evs) > 0 {
			head = evs[len(evs)-1].Version
		}
		if c > head {
			ahead = append(ahead, AheadCheckpoint{Instance: ref, Checkpoint: c, Head: head})
		}
		// fold what the row has considered, and after it the events older
		// than the grace, up to the first younger one: lag, not drift
		n := sort.Search(len(evs), func(i int) bool { return evs[i].Version > c })
		for n < len(evs) && older(evs[n], cutoff) {
			n++
		}
		for i, kr := range ks {
			if kr.Key == nil || kr.Error != nil || keyText(kr.Key) != keyStr {
				continue
			}
			addressed = true
			if i < n {
				done = true
			} else {
				pending++
			}
		}
		seeds = append(seeds, apply.Keyed{Ref: apply.InstanceRef(ref), Events: evs[:n], Keys: ks[:n]})
		k := streamKey{v.streamOf(ref.Source), ref.StreamID}
		caps[k] = max(caps[k], c)
		if n > 0 {
			caps[k] = max(caps[k], evs[n-1].Version)
		}
	}
	res := rowCheck{pending: pending}
	switch {
	case !addressed && (stored == nil || tomb):
		return res
	case !addressed && (v.sampled() || v.shared):
		res.unchecked = true
		return res
	case !addressed:
		res.finding = v.finding(FindingOrphan, key, stored, nil, refs)
		return res
	case !done: // only events younger than the grace address it
		return res
	}
	rf, err := v.e.Refold(ctx, key, stored, seeds, cappedReader{v, caps})
	switch {
	case errors.Is(err, apply.ErrRebuildFoldsNoRow):
		f := v.finding(FindingDiffers, key, stored, nil, refs)
		f.Diffs = itemDiff(stored, nil, v.ignore)
		res.finding = f
		return res
	case err != nil:
		return rowCheck{err: err}
	}
	fold := rf.Item
	if stored == nil {
		if fold != nil && !apply.IsTombstone(fold) {
			res.finding = v.finding(FindingMissing, key, nil, fold, refs)
		}
		return res
	}
	if fold == nil {
		return res // a tombstone the events leave as it is
	}
	diffs := itemDiff(stored, fold, v.ignore)
	var unapplied []EventRef
	for _, in := range rf.Outcome.Instances {
		// a rebuild reports only the events after the row's checkpoint
		evs := append([]abi.Event(nil), in.Applied...)
		for _, r := range in.Rejected {
			evs = append(evs, r.Event)
		}
		if len(evs) == 0 {
			continue
		}
		ref := InstanceRef{Source: in.Source, StreamID: in.StreamID}
		for _, ev := range evs {
			unapplied = append(unapplied, EventRef{Instance: ref, Version: ev.Version})
		}
		diffs = append(diffs, v.checkpointDiff(stored, fold, ref))
	}
	sortDiffs(diffs)
	sort.Slice(unapplied, func(i, j int) bool {
		a, b := unapplied[i], unapplied[j]
		if a.Instance != b.Instance {
			return a.Instance.String() < b.Instance.String()
		}
		return a.Version < b.Version
	})
	kind := FindingDiffers
	switch {
	case len(ahead) > 0:
		kind = FindingAhead
	case len(diffs) == 0:
		return res
	}
	f := v.finding(kind, key, stored, fold, refs)
	f.Diffs, f.Unapplied, f.Ahead = diffs, unapplied, ahead
	res.finding = f
	return res
}

// instancesOf returns the stream instances that feed a row: those whose
// walked events address it, those its checkpoints name and those
// Projection.SourcesOf finds, each once.
func (v *verifier) instancesOf(ctx context.Context, key abi.Item, keyStr string, stored abi.Item) ([]InstanceRef, error) {
	var refs []InstanceRef
	seen := map[InstanceRef]bool{}
	add := func(r InstanceRef) {
		if !seen[r] {
			seen[r] = true
			refs = append(refs, r)
		}
	}
	v.mu.Lock()
	if r := v.index[keyStr]; r != nil {
		for _, ref := range r.refs {
			add(ref)
		}
	}
	v.mu.Unlock()
	if stored != nil {
		named, _, err := v.e.NamedInstances(stored)
		if err != nil {
			return nil, fmt.Errorf("reading the row's checkpoints: %w", err)
		}
		for _, r := range named {
			add(InstanceRef(r))
		}
	}
	if f := v.p.SourcesOf; f != nil {
		found, err := f(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("finding the row's stream instances: %w", err)
		}
		for _, r := range found {
			add(InstanceRef(r))
		}
	}
	return refs, nil
}

func (v *verifier) finding(kind FindingKind, key, stored, fold abi.Item, refs []InstanceRef) *Finding {
	return &Finding{Kind: kind, Projection: v.p.Name, Key: key, Stored: stored, Fold: fold, Instances: refs}
}

// checkpointDiff is the difference of an instance's checkpoint between
// the stored item and the fold, at the path where the stored item keeps
// it (or the fold does, when the stored item holds none).
func (v *verifier) checkpointDiff(stored, fold abi.Item, ref InstanceRef) AttrDiff {
	_, path, has, _ := v.e.CheckpointOf(stored, apply.InstanceRef(ref))
	_, fpath, fhas, _ := v.e.CheckpointOf(fold, apply.InstanceRef(ref))
	if !has && fhas {
		path = fpath
	}
	if path == "" {
		path = "checkpoint of " + ref.String()
	}
	d := AttrDiff{Path: path}
	if val, ok := v.attrAt(stored, path); ok {
		d.Stored = &val
	}
	if val, ok := v.attrAt(fold, path); ok {
		d.Fold = &val
	}
	return d
}

// attrAt reads an attribute, or an entry of the checkpoint map
// ("<map>.<source>#<streamId>").
func (v *verifier) attrAt(it abi.Item, path string) (abi.Value, bool) {
	if m := v.p.Checkpoint.Map; m != "" && len(path) > len(m) && path[:len(m)+1] == m+"." {
		mv, ok := it[m]
		if !ok || mv.Kind != abi.KindM {
			return abi.Value{}, false
		}
		val, ok := mv.Map[path[len(m)+1:]]
		return val, ok
	}
	val, ok := it[path]
	return val, ok
}

// older reports whether an event was stored before cutoff; an event
// whose timestamp does not parse counts as old.
func older(ev abi.Event, cutoff time.Time) bool {
	t, err := time.Parse(eventstore.TimestampFormat, ev.Timestamp)
	if err != nil {
		if t, err = time.Parse(time.RFC3339Nano, ev.Timestamp); err != nil {
			return true
		}
	}
	return !t.After(cutoff)
}

// cappedReader serves a Refold the events the verification has read, up
// to each instance's cap: what the row considered and the events older
// than the grace after it.
type cappedReader struct {
	v    *verifier
	caps map[streamKey]uint64
}

func (r cappedReader) ReadFrom(_ context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error) {
	k := streamKey{stream, streamID}
	c, ok := r.caps[k]
	r.v.mu.Lock()
	in := r.v.insts[k]
	r.v.mu.Unlock()
	if !ok || in == nil {
		return nil, fmt.Errorf("verify: %s %s was not read", stream, streamID)
	}
	if to == 0 || to > c {
		to = c
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []abi.Event
	for _, ev := range in.evs {
		if ev.Version > after && ev.Version <= to {
			out = append(out, ev)
		}
	}
	return out, nil
}

// repair rebuilds a row found wrong through the rebuild's write
// conditions (a checkpoint above its head brought down to the head),
// catches it up with what arrived meanwhile, and checks it again.
func (v *verifier) repair(ctx context.Context, f *Finding) {
	refs := engineRefs(f.Instances)
	if _, err := v.e.RepairRow(ctx, f.Key, refs); err != nil {
		f.RepairErr = fmt.Errorf("rebuilding the row: %w", err)
		return
	}
	if _, err := v.e.CatchUpRow(ctx, f.Key, refs...); err != nil {
		f.RepairErr = fmt.Errorf("catching the row up after its rebuild: %w", err)
		return
	}
	again, err := v.h.db.GetItem(ctx, v.p.Table, f.Key)
	if err != nil {
		f.RepairErr = fmt.Errorf("reading the row after its rebuild: %w", err)
		return
	}
	switch res := v.checkOnce(ctx, f.Key, again, v.o.Now(), true); {
	case res.err != nil:
		f.RepairErr = fmt.Errorf("checking the row after its rebuild: %w", res.err)
	case res.finding != nil:
		f.RepairErr = fmt.Errorf("the row is still %s after its rebuild", res.finding.Kind)
	default:
		f.Repaired = true
	}
}
