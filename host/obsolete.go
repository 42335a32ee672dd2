package host

import (
	"context"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/internal/keys"
)

// ObsoleteRecord is a record whose image is not a valid event, but whose
// item the event table no longer holds as the record shows it: it was
// removed, or corrected (a later REMOVE or MODIFY record follows in the
// change feed). A change-feed record cannot change, so failing it again
// would block its shard for nothing: it is passed over, acknowledged, not
// reported failed.
type ObsoleteRecord struct {
	Position   int
	Identifier string
	// Err is why its image did not decode (it matches ErrEventDecode).
	Err error
}

// obsolete reads the event table's item at the key of a record that failed
// to decode (strongly consistent) and reports whether it is gone or now
// differs from the record's image, with a warning naming the key. A record
// whose image has no key, or whose read fails, is not obsolete: it stays
// failed.
func (h *Host) obsolete(ctx context.Context, f decode.DecodeFailure) bool {
	l := h.es.Layout()
	pk, sk := f.Image[l.PKName()], f.Image[l.SKName()]
	if pk.IsZero() || sk.IsZero() {
		return false
	}
	key := abi.Item{l.PKName(): pk, l.SKName(): sk}
	cur, err := h.db.GetItem(ctx, h.es.Table(), key)
	if err != nil {
		h.log.Warn("could not read the event item of a record that failed to decode, to see whether it was since removed or corrected; the record stays failed",
			"table", h.es.Table(), "key", keys.String(key), "identifier", f.Identifier, "err", err.Error())
		return false
	}
	if cur != nil && abi.ItemsEqual(cur, f.Image) {
		return false
	}
	now := "removed"
	if cur != nil {
		now = "corrected"
	}
	h.log.Warn("change-feed record passed over: the event table no longer holds its item as the record shows it (it was "+now+" since), so the record is not failed again",
		"table", h.es.Table(), "key", keys.String(key), "identifier", f.Identifier, "item", now, "decodeError", f.Err.Error())
	return true
}
