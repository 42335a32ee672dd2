package ddblocal

import (
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
	"github.com/dynafold/dynafold/ddblocal/internal/streams"
)

// change is one item write: old is the item before (nil: absent), new the
// item after (nil: deleted).
type change struct {
	t   *table
	key abi.Item
	old abi.Item
	new abi.Item
}

// noop reports whether the change leaves the item as it was.
func (c change) noop() bool {
	if c.old == nil || c.new == nil {
		return c.old == nil && c.new == nil
	}
	return abi.ItemsEqual(c.old, c.new)
}

var ttlIdentity = &streams.Identity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}

// commit applies changes atomically: stored with their stream records (and
// the records of a Kinesis streaming destination) in one store transaction (so an acknowledged write never lacks its record,
// nor has two, whatever instant the process dies at), applied in memory,
// then, in memory mode, recorded in the tables' streams. The caller holds
// the write lock of every table involved. Changes that change nothing are
// neither stored nor recorded.
func (s *Server) commit(changes []change, ident *streams.Identity) error {
	eff := changes[:0:0]
	for _, c := range changes {
		if !c.noop() {
			eff = append(eff, c)
		}
	}
	if len(eff) == 0 {
		return nil
	}
	at := s.now()
	recs := streamChanges(eff, ident, at)
	krecs := s.kinesisChanges(eff, ident, at) // kinesis_dest.go
	if s.db != nil {
		if err := s.persistChanges(eff, recs, krecs); err != nil {
			return err
		}
	}
	if w := s.faults.staleWindow(); w > 0 {
		for _, c := range eff {
			c.t.noteStale(c.key, c.old, at, at.Add(w))
		}
	}
	for _, c := range eff {
		if c.new == nil {
			c.t.remove(c.key)
		} else {
			c.t.put(c.new)
		}
	}
	if s.db == nil {
		for _, r := range recs {
			s.streams.Record(r.arn, r.ch)
		}
		for _, r := range krecs {
			s.kin.Record(r.stream, r.pk, r.data)
		}
	}
	return nil
}

// streamRecord is the stream record of one change.
type streamRecord struct {
	arn string
	ch  streams.Change
}

// streamChanges returns the stream records of changes to tables whose
// stream is enabled.
func streamChanges(eff []change, ident *streams.Identity, at time.Time) []streamRecord {
	var out []streamRecord
	for _, c := range eff {
		m := c.t.meta
		if m.Stream == nil || !m.Stream.StreamEnabled || m.StreamArn == "" {
			continue
		}
		ch := streams.Change{Keys: abi.CloneItem(c.key), UserIdentity: ident, At: at}
		switch {
		case c.old == nil:
			ch.EventName = "INSERT"
		case c.new == nil:
			ch.EventName = "REMOVE"
		default:
			ch.EventName = "MODIFY"
		}
		vt := m.Stream.StreamViewType
		if vt == "OLD_IMAGE" || vt == "NEW_AND_OLD_IMAGES" {
			ch.OldImage = c.old
		}
		if vt == "NEW_IMAGE" || vt == "NEW_AND_OLD_IMAGES" {
			ch.NewImage = c.new
		}
		out = append(out, streamRecord{m.StreamArn, ch})
	}
	return out
}

func itemSize(it abi.Item) int { return expr.ItemSize(it) }
