package apply

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/suggest"
)

// rowState is a row as read: its item and the engine's fields in it. A
// tombstone is no row (item is nil), but its checkpoints and revision are
// read as a row's.
type rowState struct {
	item        abi.Item // the row's state as stored; nil when absent or a tombstone
	stored      abi.Item // the item as read, tombstone included; nil when absent
	tombstone   bool     // the item read is a tombstone
	revision    int64
	hasRevision bool
	owners      []string          // per source: its instance field, the stream id its checkpoint field follows ("" unowned)
	entries     map[string]uint64 // the checkpoint map, by "<source>#<streamId>"
}

// readRow parses the engine's fields of a row as read.
func (e *Engine) readRow(item abi.Item) (*rowState, error) {
	s := &rowState{item: item, stored: item}
	if IsTombstone(item) {
		s.item, s.tombstone = nil, true
	}
	if e.p.Revision != nil && item != nil {
		// the revision of a tombstone too: a create over it carries it on
		if v, ok := item[e.p.Revision.Field]; ok {
			n, err := intField(v)
			if err != nil {
				return nil, fmt.Errorf("the row's revision field %q %v; it must be an integer the projection increments on every write", e.p.Revision.Field, err)
			}
			s.revision, s.hasRevision = n, true
		}
	}
	cp := e.p.Checkpoint
	s.owners = make([]string, len(e.scal))
	for i, sc := range e.scal {
		if sc.InstanceField == "" || item == nil {
			continue
		}
		if v, ok := item[sc.InstanceField]; ok {
			if v.Kind != abi.KindS {
				return nil, fmt.Errorf("the row's instance field %q is of type %s, not S; it must hold the stream id whose checkpoint the field %q holds", sc.InstanceField, v.Kind, sc.Field)
			}
			s.owners[i] = v.Str
		}
	}
	if cp.Map != "" && item != nil {
		if v, ok := item[cp.Map]; ok {
			if v.Kind != abi.KindM {
				return nil, fmt.Errorf("the row's checkpoint map %q is of type %s, not M; it must map \"<source>#<streamId>\" to the last version considered", cp.Map, v.Kind)
			}
			s.entries = make(map[string]uint64, len(v.Map))
			for k, ev := range v.Map {
				n, err := intField(ev)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("the row's checkpoint map %q: entry %q is not a stream version; it must hold the last version considered", cp.Map, k)
				}
				s.entries[k] = uint64(n)
			}
		}
	}
	return s, nil
}

// ErrCheckpointMissing is matched by the error of a row the host wrote (it
// carries the projection's writtenBy attribute) that holds none of the
// checkpoint attributes the configuration names, or of a row that lacks a
// checkpoint field but holds a whole number under a name one or two edits
// from it: not a legacy row, on which every event applies, but a
// configuration whose checkpoint names changed (a typo), under which
// every event would be folded again.
var ErrCheckpointMissing = errors.New("the row holds none of its checkpoint attributes")

// CheckRow returns ErrCheckpointMissing, explained, when a stored row
// (not a tombstone) cannot be read as this configuration's: one the host
// wrote that holds none of its checkpoint attributes, or one whose
// checkpoint field's name is a near miss of an attribute it holds. A
// verification counts such a row as not checked rather than as drift,
// whose repair would write it under the misspelled name.
func (e *Engine) CheckRow(item abi.Item) error {
	s, err := e.readRow(item)
	if err != nil {
		return err
	}
	return e.checkHostRow(s)
}

// checkHostRow returns ErrCheckpointMissing, explained, when s is a row the
// host wrote that holds none of the projection's checkpoint attributes, or
// a row without its checkpoint field that holds a number under a name
// within two edits of it (a typo of the field's name: "verison").
func (e *Engine) checkHostRow(s *rowState) error {
	if s.item == nil {
		return nil
	}
	by, ok := s.item[e.p.WrittenBy]
	if e.p.WrittenBy == "" || !ok {
		// no writer recorded: a legacy row, written by another system, or
		// one whose checkpoint field's name is misspelled
		return e.checkNearMiss(s)
	}
	var names []string
	if m := e.p.Checkpoint.Map; m != "" {
		if _, ok := s.item[m]; ok {
			return nil
		}
		names = append(names, m)
	}
	for _, sc := range e.scal {
		if _, ok := s.item[sc.Field]; ok {
			return nil
		}
		names = append(names, sc.Field)
	}
	return fmt.Errorf("%w: %s wrote the row (its %q attribute), but it holds none of the checkpoint attributes the configuration names (%s); folding on it would apply every event again. Check the projection's checkpoint field names for a typo; if they were renamed on purpose, rebuild the rows (`host rebuild`), which writes them anew",
		ErrCheckpointMissing, by.Str, e.p.WrittenBy, strings.Join(quoted(names), ", "))
}

// checkNearMiss returns ErrCheckpointMissing when a checkpoint field the
// row lacks is nearly the name of a whole number the row holds (the same
// in other case, one edit away, or two for a name of 7 letters or more):
// the configuration's name is most likely a typo of the row's, and folding
// on the row as one written without a checkpoint would apply every event
// again.
func (e *Engine) checkNearMiss(s *rowState) error {
	var names []string // the row's whole numbers, read once a field is missing
	for _, sc := range e.scal {
		if _, ok := s.item[sc.Field]; ok || len(sc.Field) < 4 {
			continue // the common case on every fold: nothing more is read
		}
		if names == nil {
			names = make([]string, 0, len(s.item))
			for n, v := range s.item {
				if k, err := intField(v); err == nil && k >= 0 {
					names = append(names, n)
				}
			}
			slices.Sort(names)
		}
		if near := nearMiss(sc.Field, names); near != "" {
			return fmt.Errorf("%w: the row has no checkpoint attribute %q but a number %q (%s): did you mean %q? Folding on it as a row written without a checkpoint would apply every event again. Check the projection's checkpoint field name; if the row's attribute is another one on purpose, rebuild the rows (`host rebuild`), which writes them anew",
				ErrCheckpointMissing, sc.Field, near, s.item[near].Str, near)
		}
	}
	return nil
}

// nearMiss returns the name of names that field is most likely a typo of:
// the same in other case, one edit away, or two for a field of 7 letters
// or more ("" when none is).
func nearMiss(field string, names []string) string {
	near := suggest.Nearest(field, names)
	if near == "" || near == field {
		return ""
	}
	if d := suggest.Distance(strings.ToLower(field), strings.ToLower(near)); d > 1 && (d > 2 || len(field) < 7) {
		return ""
	}
	return near
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// mapKey is an instance's entry in the checkpoint map.
func mapKey(id instanceID) string { return id.source + "#" + id.streamID }

// fieldCheckpoint returns the checkpoint held by a source's checkpoint
// field: the last version considered for the row (0 when none).
func (s *rowState) fieldCheckpoint(f Scalar) (uint64, error) {
	if s.stored == nil {
		return 0, nil
	}
	v, ok := s.stored[f.Field]
	if !ok {
		return 0, nil // a legacy row: every event applies
	}
	n, err := intField(v)
	if err != nil {
		return 0, fmt.Errorf("the row's checkpoint field %q %v; it must hold the last applied stream version (plus offset %d)", f.Field, err, f.Offset)
	}
	c := n - f.Offset
	if c < 0 {
		return 0, fmt.Errorf("the row's checkpoint field %q holds %d, below the offset %d: that is no stream version", f.Field, n, f.Offset)
	}
	return uint64(c), nil
}

// nextRevision is the revision the next write sets.
func (s *rowState) nextRevision(r *Revision) int64 {
	if !s.hasRevision {
		return *r.Initial
	}
	return s.revision + 1
}

// intField reads an integer number attribute.
func intField(v abi.Value) (int64, error) {
	if v.Kind != abi.KindN {
		return 0, fmt.Errorf("is of type %s, not N", v.Kind)
	}
	n, err := strconv.ParseInt(v.Str, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("holds %q, not an integer", v.Str)
	}
	return n, nil
}
