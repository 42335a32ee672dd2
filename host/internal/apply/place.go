package apply

import "fmt"

// The place of an instance's checkpoint in the row.
const (
	slotField = iota // its source's checkpoint field
	slotMap          // its entry in the checkpoint map
	slotNone         // nowhere: the field follows another instance and there is no map
)

// placement is what the folds of one attempt decided about places, carried
// into the next plan of the same attempt.
type placement struct {
	adopter  map[int]string       // per source index: the stream id that adopted its unowned field
	owner    map[int]string       // per source index: the stream id its field follows, for messages
	conflict map[instanceID]error // instances that wrote with no place for their checkpoint
}

func newPlacement() *placement {
	return &placement{adopter: map[int]string{}, owner: map[int]string{}, conflict: map[instanceID]error{}}
}

// assign gives each run (in fold order) its checkpoint's place. A source
// without a checkpoint field of its own keeps its instances in the map. A
// source with one: the field follows the instance its instance field names;
// every other instance goes to the map, or, without a map, has no place
// (it fails with ErrProjectionSourceConflict if it writes, see settle).
// An unowned field is a candidate place for each instance of the source
// that the map does not keep already: the first of them that writes
// adopts it (settle). On a rebuild the field goes to the first instance in
// fold order. Without an instance field the row does not say which
// instance its field follows, so a second instance of the source fails the
// row.
func (e *Engine) assign(runs []*run, row *rowState, rebuild bool, pl *placement) error {
	owners := append([]string(nil), row.owners...)
	if rebuild {
		clear(owners)
	}
	elsewhere := slotNone
	if e.p.Checkpoint.Map != "" {
		elsewhere = slotMap
	}
	for _, r := range runs {
		sc := e.scal[r.srcIdx]
		r.slot, r.adopts = slotMap, false
		switch {
		case sc.Field == "":
		case sc.InstanceField == "":
			if n := countSource(runs, r.srcIdx); n > 1 {
				return fmt.Errorf("%w: stream instances %s feed one row, but its checkpoint field %q can follow only one and the row does not record which; set checkpoint.instanceField and checkpoint.map to give each instance its own checkpoint, or key rows by stream instance", ErrProjectionSourceConflict, describeRuns(runs), sc.Field)
			}
			r.slot = slotField
		case rebuild || owners[r.srcIdx] != "":
			if owners[r.srcIdx] == "" {
				owners[r.srcIdx] = r.id.streamID // a rebuild: the first in fold order
			}
			pl.owner[r.srcIdx] = owners[r.srcIdx]
			r.slot = elsewhere
			if r.id.streamID == owners[r.srcIdx] {
				r.slot = slotField
			}
		case hasEntry(row, r.id):
			// An instance the map keeps never adopts the field: it would
			// read the field's checkpoint and fold its events again.
		case pl.adopter[r.srcIdx] != "":
			r.slot = elsewhere
			if r.id.streamID == pl.adopter[r.srcIdx] {
				r.slot = slotField
			}
		default:
			r.slot, r.adopts = slotField, true
		}
		if err := pl.conflict[r.id]; err != nil {
			r.failed = err
		}
	}
	return nil
}

// settle decides what a fold leaves open, and reports whether the row must
// be planned and folded again:
//
//   - an unowned field goes to the first candidate (in fold order) that
//     applied or rejected an event; the other candidates go to the map (or
//     have no place). When none wrote, nobody adopts it and none of them
//     writes a checkpoint;
//   - an instance with no place for its checkpoint that applied or rejected
//     an event fails with ErrProjectionSourceConflict, alone; its events
//     leave the fold. One that only skipped (or had everything applied
//     already) needs no place and does not fail.
//
// A candidate that read the field's checkpoint (non-zero) but does not
// adopt it is planned again against its own (none yet).
func (e *Engine) settle(runs []*run, f *folded, pl *placement) bool {
	again := false
	for idx := range e.scal {
		var adopter *run
		for _, r := range runs {
			if r.adopts && r.srcIdx == idx && r.failed == nil && r.moved {
				adopter = r
				break
			}
		}
		if adopter == nil {
			continue // nobody wrote the field: the candidates write no checkpoint
		}
		pl.adopter[idx], pl.owner[idx] = adopter.id.streamID, adopter.id.streamID
		for _, r := range runs {
			if !r.adopts || r.srcIdx != idx {
				continue
			}
			r.adopts = false
			switch {
			case r == adopter || r.failed != nil:
			case r.c != 0:
				again = true // it read the field's checkpoint, not its own
			case e.p.Checkpoint.Map != "":
				r.slot = slotMap
			default:
				r.slot = slotNone
			}
		}
	}
	for _, r := range runs {
		if r.slot != slotNone || r.failed != nil || !r.moved {
			continue
		}
		sc := e.scal[r.srcIdx]
		pl.conflict[r.id] = fmt.Errorf("%w: %s feeds a row whose checkpoint field %q follows %s (instance field %q), and the projection has no checkpoint map for another instance; set checkpoint.map to give each instance its own checkpoint, or key rows by stream instance", ErrProjectionSourceConflict, describeRuns([]*run{r}), sc.Field, pl.owner[r.srcIdx], sc.InstanceField)
		again = true
	}
	return again
}

func countSource(runs []*run, idx int) int {
	n := 0
	for _, r := range runs {
		if r.srcIdx == idx {
			n++
		}
	}
	return n
}

func hasEntry(row *rowState, id instanceID) bool {
	_, ok := row.entries[mapKey(id)]
	return ok
}

func describeRuns(runs []*run) string {
	s := ""
	for i, r := range runs {
		if i > 0 {
			s += ", "
		}
		s += r.id.source + "#" + r.id.streamID
	}
	return s
}
