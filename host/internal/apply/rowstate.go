package apply

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dynafold/dynafold/abi"
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
// checkpoint attributes the configuration names: not a legacy row, on
// which every event applies, but a configuration whose checkpoint names
// changed (a typo), under which every event would be folded again.
var ErrCheckpointMissing = errors.New("the row holds none of its checkpoint attributes")

// checkHostRow returns ErrCheckpointMissing, explained, when s is a row the
// host wrote that holds none of the projection's checkpoint attributes.
func (e *Engine) checkHostRow(s *rowState) error {
	if s.item == nil || e.p.WrittenBy == "" {
		return nil
	}
	by, ok := s.item[e.p.WrittenBy]
	if !ok {
		return nil // a legacy row, written by another system
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
