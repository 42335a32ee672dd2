package host

import (
	"context"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/internal/keys"
)

// ObsoleteRecord is a record whose image is not a valid event, but whose
// item the event table no longer holds as the record shows it: it was
// removed (a later REMOVE record follows in the change feed), or
// corrected (a MODIFY). A change-feed record cannot change, so failing it
// again would block its shard for nothing: a removed item's record is
// passed over, acknowledged, not reported failed (Result.Obsolete); a
// record whose item was corrected into an event is folded as that event
// (Result.Corrected).
type ObsoleteRecord struct {
	Position   int
	Identifier string
	// Err is why its image did not decode (it matches ErrEventDecode).
	Err error
}

// obsolete reads the event table's item at the key of a record that failed
// to decode (strongly consistent) and reports whether it is gone or now
// differs from the record's image, with the event the item now holds when
// it was corrected (nil when gone). A record whose image has no key, or whose read fails, or whose
// item was changed into one that still does not decode, is not obsolete:
// it stays failed (passing it over would skip its event). A removed
// item's record is passed over with a warning naming the key; a corrected
// event is folded as the record's (the batch decodes it), with a warning
// saying so.
func (h *Host) obsolete(ctx context.Context, f decode.DecodeFailure) (bool, *decode.Event) {
	l := h.es.Layout()
	pk, sk := f.Image[l.PKName()], f.Image[l.SKName()]
	if pk.IsZero() || sk.IsZero() {
		return false, nil
	}
	key := abi.Item{l.PKName(): pk, l.SKName(): sk}
	cur, err := h.db.GetItem(ctx, h.es.Table(), key)
	if err != nil {
		h.log.Warn("could not read the event item of a record that failed to decode, to see whether it was since removed or corrected; the record stays failed",
			"table", h.es.Table(), "key", keys.String(key), "identifier", f.Identifier, "err", err.Error())
		return false, nil
	}
	if cur != nil && abi.ItemsEqual(cur, f.Image) {
		return false, nil
	}
	if cur == nil {
		h.log.Warn("change-feed record passed over: the event table no longer holds its item (it was removed since), so the record is not failed again",
			"table", h.es.Table(), "key", keys.String(key), "identifier", f.Identifier, "item", "removed", "decodeError", f.Err.Error())
		return true, nil
	}
	d, ok, derr := h.dopts.Decoder.Decode(cur)
	if derr != nil || !ok {
		// Passing it over would skip the event: the record fails until the
		// item decodes, and is then folded from it.
		why := "it is no event of a configured stream"
		if derr != nil {
			why = derr.Error()
		}
		h.log.Warn("the event item of a failing change-feed record was changed since, but does not decode either; the record fails until the item decodes (then it is folded from the item as it is now) or is removed (then it is passed over)",
			"table", h.es.Table(), "key", keys.String(key), "identifier", f.Identifier, "itemNow", why)
		return false, nil
	}
	h.log.Warn("change-feed record's event item was corrected since: the item as it is now is folded in its place",
		"table", h.es.Table(), "key", keys.String(key), "identifier", f.Identifier, "item", "corrected", "decodeError", f.Err.Error())
	return true, &decode.Event{Position: f.Position, Identifier: f.Identifier, Stream: d.Stream, Event: d.Event, Created: f.Created}
}
