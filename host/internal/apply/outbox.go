package apply

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/itemcheck"
)

// Outbox makes a projection commit the effects of its applied events with
// the row: each row write whose applied events carry effects writes the row
// (or tombstone) and one outbox item per effect in one TransactWriteItems.
// A write without effects stays a single PutItem.
//
// The items live in the row's own partition of the read-model table (the
// row's hash key value, the sort key "<row's sort key>#outbox#<revision>#<index>",
// marker MarkerAttr = "<EntityType>#outbox"), which needs a table with a
// sort key; or, with Table, in another table keyed by KeyAttrs. Every item
// also carries the sparse index key attributes OutboxIndexPK / OutboxIndexSK,
// so an index on them lists the rows with pending effects. The index's hash
// key spreads the projection's pending effects over IndexBuckets
// partitions (IndexBucket), so that no single index partition takes every
// effect write.
//
// The outbox needs a revision: it orders a row's items across writes.
type Outbox struct {
	EntityType string   // the read model's entity type: items are marked "<EntityType>#outbox" (required)
	Table      string   // "": the read-model table, in the row's partition
	KeyAttrs   []string // the outbox table's key attributes, hash then range (default pk, sk); only with Table
	Index      string   // the sparse index on OutboxIndexPK / OutboxIndexSK ("" : none)
	// IndexBuckets is how many index hash keys the projection's pending
	// effects are spread over (0: DefaultIndexBuckets). A row's effects
	// all go to one bucket, chosen by its key.
	IndexBuckets int
	// Drain, when set, is called for each row a call wrote with effects,
	// right after its write (delivery on ApplyBatch). It delivers the row's
	// pending effects in order and says how many it delivered and how many
	// it could not; it never fails the row.
	Drain func(ctx context.Context, key abi.Item) (delivered, undelivered int)
	// Deliver, when set, is called instead of Drain, with what the write
	// committed (Committed): its items, committed already claimed for
	// ClaimFor, so that they go out without a read and a claim of their
	// own, and the read of the row's outbox head made beside the write.
	Deliver func(ctx context.Context, c Committed) (delivered, undelivered int)
	// ClaimFor is how long the claim of the items committed for Deliver
	// holds (required with Deliver).
	ClaimFor time.Duration
}

// MaxEffects is the most effects one row write commits: a transaction holds
// 100 items, one of them the row. A run of events with more is written in
// steps (steps.go).
const MaxEffects = 99

// OutboxSuffix ends the marker of an outbox item: "<entityType>#outbox".
const OutboxSuffix = "#outbox"

// The attributes of an outbox item besides its key and marker.
const (
	OutboxAttrRowKey   = "__edd_ob_key"    // M: the key of the row whose write committed the effect
	OutboxAttrStream   = "__edd_ob_stream" // S: the event's stream
	OutboxAttrStreamID = "__edd_ob_sid"    // S: the event's stream id
	OutboxAttrVersion  = "__edd_ob_ver"    // N: the event's version
	OutboxAttrIndex    = "__edd_ob_idx"    // N: the effect's index among its event's effects
	OutboxAttrRevision = "__edd_ob_rev"    // N: the row revision whose write committed it
	OutboxAttrValue    = "__edd_ob_val"    // the effect as the plugin returned it
	OutboxAttrOwner    = "__edd_ob_owner"  // S: the drainer holding the claim
	OutboxAttrUntil    = "__edd_ob_until"  // N: the claim's end, Unix milliseconds
	OutboxAttrWaiter   = "__edd_ob_wait"   // BOOL: another drainer waits on the claim's holder to drain on
	OutboxIndexPK      = "__edd_ob_pk"     // S: the sparse index's hash key: the projection's bucket (IndexBucket)
	OutboxIndexSK      = "__edd_ob_sk"     // S: the sparse index's range key: row key, revision, index
)

// ErrTooManyEffects is the error of a row with an event whose effects
// alone are more than one transaction can commit with the row (MaxEffects):
// no write of the row can commit them. A run of events with more effects
// in all is written in steps instead (steps.go).
var ErrTooManyEffects = errors.New("too many effects for one row write")

// OutboxLayout says where a projection's outbox items live and how they are
// keyed; the drainer reads them through it.
type OutboxLayout struct {
	Projection string
	Table      string   // the table holding the items
	InRow      bool     // the items are in the row's partition of the read-model table
	KeyAttrs   []string // the item table's key attributes (hash, range)
	RowAttrs   []string // the read-model table's key attributes
	Marker     string   // "<entityType>#outbox"
	Index      string
	Buckets    int // the index hash keys pending effects are spread over
}

// OutboxLayout returns where the projection's outbox items live; ok is
// false when the projection has no outbox.
func (p Projection) OutboxLayout() (OutboxLayout, bool) {
	o := p.Outbox
	if o == nil {
		return OutboxLayout{}, false
	}
	l := OutboxLayout{Projection: p.Name, Table: o.Table, KeyAttrs: o.KeyAttrs, RowAttrs: p.KeyAttrs, Marker: o.EntityType + OutboxSuffix, Index: o.Index, Buckets: o.IndexBuckets}
	if l.Buckets <= 0 {
		l.Buckets = DefaultIndexBuckets
	}
	if o.Table == "" {
		l.Table, l.InRow, l.KeyAttrs = p.Table, true, p.KeyAttrs
	} else if len(l.KeyAttrs) == 0 {
		l.KeyAttrs = []string{"pk", "sk"}
	}
	return l, true
}

// seq is a revision and index as a sort key part that orders as numbers.
func seq(revision int64, index int) string {
	if revision < 0 || index < 0 {
		return fmt.Sprintf("%020d#%03d", revision, index)
	}
	// fmt's "%020d#%03d", without fmt: two of them a committed effect.
	var buf [20 + 1 + 20]byte
	b := padded(buf[:0], uint64(revision), 20)
	b = append(b, '#')
	b = padded(b, uint64(index), 3)
	return string(b)
}

// padded appends v's decimal digits, zero-padded to width.
func padded(b []byte, v uint64, width int) []byte {
	var d [20]byte
	ds := strconv.AppendUint(d[:0], v, 10)
	for i := len(ds); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, ds...)
}

// HeadQuery returns the query of a row's oldest outbox item (its head),
// strongly consistent.
func (l OutboxLayout) HeadQuery(rowKey abi.Item) (store.Query, error) {
	hash, prefix, err := l.HeadPrefix(rowKey)
	if err != nil {
		return store.Query{}, err
	}
	q := store.Query{Table: l.Table, KeyCond: "#h = :h", Names: map[string]string{"#h": l.KeyAttrs[0]},
		Values: map[string]abi.Value{":h": hash}, Limit: 1}
	if prefix != "" {
		q.KeyCond += " AND begins_with(#r, :p)"
		q.Names["#r"] = l.KeyAttrs[1]
		q.Values[":p"] = abi.S(prefix)
	}
	return q, nil
}

// HeadPrefix returns the key of the partition holding a row's items and the
// prefix their sort keys start with, in commit order.
func (l OutboxLayout) HeadPrefix(rowKey abi.Item) (hash abi.Value, prefix string, err error) {
	if !l.InRow {
		return abi.S(l.Projection + "#" + keyString(rowKey)), "", nil
	}
	sk := rowKey[l.KeyAttrs[1]]
	if sk.Kind != abi.KindS {
		return abi.Value{}, "", fmt.Errorf("row %s: the outbox keeps its items under the row's sort key, which must be a string (S), not %s; give the outbox a table of its own (outbox.table)", keyString(rowKey), sk.Kind)
	}
	return rowKey[l.KeyAttrs[0]], sk.Str + "#outbox#", nil
}

// ItemKey returns the key of a row's outbox item for the effect of the
// given revision and index.
func (l OutboxLayout) ItemKey(rowKey abi.Item, revision int64, index int) (abi.Item, error) {
	key := make(abi.Item, 2)
	if err := l.setItemKey(key, rowKey, revision, index); err != nil {
		return nil, err
	}
	return key, nil
}

// setItemKey puts the key of a row's outbox item (ItemKey) into item.
func (l OutboxLayout) setItemKey(item, rowKey abi.Item, revision int64, index int) error {
	hash, prefix, err := l.HeadPrefix(rowKey)
	if err != nil {
		return err
	}
	item[l.KeyAttrs[0]], item[l.KeyAttrs[1]] = hash, abi.S(prefix+seq(revision, index))
	return nil
}

// outboxItemRoom is the number of attributes of an outbox item (put): its
// key, the ten the engine sets and the two of a delivery's claim. The map
// is made that large at once; made for the key and grown, it left a group
// of slots behind per item.
const outboxItemRoom = 14

// effect is one effect of an applied event, in fold order.
type effect struct {
	ev    abi.Event
	index int
	value abi.Value
}

// effects returns the effects of the events the fold applied, in fold
// order: sources in declaration order, then stream id, then version.
// A rebuild commits only those of the events it applies after the row's
// checkpoints: the others' were committed when they were first applied
// (rebuild.go).
func effects(w *rowWork, runs []*run, f *folded) []effect {
	var out []effect
	for r, i := range committing(w, runs) {
		for j, v := range r.decided[i].Effects {
			out = append(out, effect{ev: r.fold[i], index: j, value: v})
		}
	}
	return out
}

// committing yields, run by run, the events whose effects a write of the
// runs commits: those applied by runs that did not fail, but for a
// rebuild's events the row had already considered (silentEffect).
func committing(w *rowWork, runs []*run) iter.Seq2[*run, int] {
	return func(yield func(*run, int) bool) {
		for _, r := range runs {
			if r.failed != nil {
				continue
			}
			for i, d := range r.decided {
				if d.Outcome != abi.Applied || i >= len(r.fold) || w.silentEffect(r.id, r.fold[i]) {
					continue
				}
				if !yield(r, i) {
					return
				}
			}
		}
	}
}

// put writes the row item it under cond: one PutItem, or, when the fold's
// applied events carry effects and the projection has an outbox, one
// TransactWriteItems of the row and its outbox items. It records the number
// of effects committed in w.enqueued. A transaction cancelled by the row's
// condition (or a conflict with another writer) is a lost race
// (store.ErrConditionFailed).
func (e *Engine) put(ctx context.Context, w *rowWork, runs []*run, f *folded, it abi.Item, cond *store.Cond, revision int64) error {
	w.enqueued, w.committed = 0, nil
	fx := effects(w, runs, f)
	l, ok := e.p.OutboxLayout()
	if len(fx) == 0 || !ok {
		return e.db.PutItem(ctx, store.Put{Table: e.p.Table, Item: it, Cond: cond})
	}
	if len(fx) > MaxEffects {
		// A longer run is written in steps (steps.go): this one's effects
		// changed between the folds of its step.
		return fmt.Errorf("%w: the write of row %s would commit %d effects, and one transaction holds the row and at most %d; the engine writes a longer run in steps whose effects fit, but folded again this step's events returned more effects: evolve must return the same effects for the same events and state", ErrTooManyEffects, w.keyStr, len(fx), MaxEffects)
	}
	writes := make([]store.Write, 0, len(fx)+1)
	writes = append(writes, store.Write{Put: &store.Put{Table: e.p.Table, Item: it, Cond: cond}})
	claim := e.newClaim(ctx, l, w.key)
	for i, x := range fx {
		item := make(abi.Item, outboxItemRoom)
		if err := l.setItemKey(item, w.key, revision, i); err != nil {
			return err
		}
		item[MarkerAttr] = abi.S(l.Marker)
		item[OutboxAttrRowKey] = abi.M(w.key)
		item[OutboxAttrStream] = abi.S(x.ev.Stream)
		item[OutboxAttrStreamID] = abi.S(x.ev.StreamID)
		item[OutboxAttrVersion] = abi.N(strconv.FormatUint(x.ev.Version, 10))
		item[OutboxAttrIndex] = abi.N(strconv.Itoa(x.index))
		item[OutboxAttrRevision] = abi.N(strconv.FormatInt(revision, 10))
		item[OutboxAttrValue] = x.value
		item[OutboxIndexPK] = abi.S(l.IndexBucket(w.keyStr))
		item[OutboxIndexSK] = abi.S(w.keyStr + "#" + seq(revision, i))
		claim.mark(item)
		if p := itemcheck.TooLarge(item); p != nil && !e.p.NoOutputCheck {
			return e.outputError(f, x.ev, fmt.Sprintf("the outbox item of effect %d", x.index), p)
		}
		writes = append(writes, store.Write{Put: &store.Put{Table: l.Table, Item: item}})
	}
	err := e.db.TransactWriteItems(ctx, writes)
	var tx *store.TxCanceledError
	if errors.As(err, &tx) && len(tx.Reasons) > 0 {
		for _, r := range tx.Reasons {
			if r == "TransactionConflict" {
				return fmt.Errorf("%w: %w", store.ErrConditionFailed, err)
			}
		}
		if tx.Reasons[0] != "ConditionalCheckFailed" {
			// not the row's guard: a failed outbox put is no lost race
			return fmt.Errorf("committing row %s with %d outbox items: %s", w.keyStr, len(fx), tx.Error())
		}
	}
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("%w: %w", store.ErrConditionFailed, err)
	}
	if err == nil {
		w.enqueued = len(fx)
		w.committed = claim.committed(w.key, writes[1:])
	}
	return err
}

// validateOutbox reports an outbox configuration that cannot work.
func (p *Projection) validateOutbox() error {
	o := p.Outbox
	if o == nil {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("projection %q: %w: outbox: "+format, append([]any{p.Name, ErrConfig}, args...)...)
	}
	switch {
	case p.Revision == nil:
		return bad("needs a revision field: the revision orders a row's outbox items across writes; set revision")
	case *p.Revision.Initial < 0:
		return bad("the revision's initial value %d is negative; outbox items are ordered by revision: use 0 or more", *p.Revision.Initial)
	case o.EntityType == "":
		return bad("needs the read model's entity type: outbox items are marked %s = \"<entityType>%s\"", MarkerAttr, OutboxSuffix)
	case o.Table == "" && len(p.KeyAttrs) < 2:
		return bad("table %s has no sort key, so outbox items cannot share the row's partition; give the outbox a table of its own (outbox.table)", p.Table)
	case o.Table == "" && len(o.KeyAttrs) > 0:
		return bad("key attributes %v are set, but no outbox table: they key an outbox table of its own", o.KeyAttrs)
	case o.Table != "" && len(o.KeyAttrs) != 0 && len(o.KeyAttrs) != 2:
		return bad("table %s needs 2 key attributes (hash, range), got %v", o.Table, o.KeyAttrs)
	case o.IndexBuckets < 0 || o.IndexBuckets > MaxIndexBuckets:
		return bad("%d index buckets: use 1 to %d (0: %d)", o.IndexBuckets, MaxIndexBuckets, DefaultIndexBuckets)
	case o.Deliver != nil && o.ClaimFor <= 0:
		return bad("delivery on write needs the claim's duration (ClaimFor), got %s", o.ClaimFor)
	}
	return nil
}
