package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
)

// ErrUnknownProjection is matched by a call naming a projection the
// configuration does not define.
var ErrUnknownProjection = errors.New("unknown projection")

func (h *Host) engine(projection string) (*apply.Engine, error) {
	e, ok := h.engines[projection]
	if !ok {
		return nil, fmt.Errorf("%w %q: the configuration has %v", ErrUnknownProjection, projection, h.order)
	}
	return e, nil
}

// CatchUp brings the row of the latest event of the projection's first
// source's stream instance streamID that addresses a row up to the head:
// CatchUpInstance of that instance.
func (h *Host) CatchUp(ctx context.Context, projection, streamID string) (Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return Outcome{}, err
	}
	o, err := e.CatchUp(ctx, streamID)
	return outcomeOf(o), err
}

// CatchUpInstance brings the row of a stream instance's latest event that
// addresses a row up to the head: for a stream whose last event was set
// aside (dead-lettered). The row is caught up as CatchUpRow does, from
// every instance its checkpoints know and this one. It returns that row's
// outcome; ErrNoRow when no event of the instance addresses a row.
func (h *Host) CatchUpInstance(ctx context.Context, projection string, ref InstanceRef) (Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return Outcome{}, err
	}
	o, err := e.CatchUpInstance(ctx, apply.InstanceRef{Source: ref.Source, StreamID: ref.StreamID})
	return outcomeOf(o), err
}

// CatchUpRows brings every row a stream instance feeds (the rows its
// events address) up to the head, each as CatchUpRow does: from every
// instance its checkpoints know and this one. A row left behind (a record
// given up, a failed delivery) is brought up even when the stream's latest
// event addresses another row; a row already at the head is not written,
// and its outcome reports the checkpoints it holds. ErrNoEvents when the
// instance has no event; ErrNoRow when none of its events addresses a row.
func (h *Host) CatchUpRows(ctx context.Context, projection string, ref InstanceRef) ([]Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	rows, err := e.CatchUpRows(ctx, apply.InstanceRef{Source: ref.Source, StreamID: ref.StreamID})
	return outcomesOf(rows), err
}

// Rebuild re-derives every row that the projection's first source's stream
// instance streamID feeds: RebuildInstance of that instance.
func (h *Host) Rebuild(ctx context.Context, projection, streamID string) ([]Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	rows, err := e.Rebuild(ctx, streamID)
	return outcomesOf(rows), err
}

// RebuildInstance re-derives every row a stream instance feeds (the rows
// its events address): for backfills, a new read model over existing
// streams, or a changed plugin. Each row is rebuilt as RebuildRowAll does,
// from every instance that feeds it, so the other sources of a row keep
// their part and their checkpoints; a row whose instances cannot all be
// named is refused (ErrUnnamedInstance) while the others are rebuilt. Each
// row is written once, conditioned on what was read; events the row had
// already considered are folded without their effects and not reported,
// so a rebuild never replays side effects, and events after its
// checkpoints are applied as a delivery would (see RebuildRow).
func (h *Host) RebuildInstance(ctx context.Context, projection string, ref InstanceRef) ([]Outcome, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	rows, err := e.RebuildInstance(ctx, apply.InstanceRef{Source: ref.Source, StreamID: ref.StreamID})
	return outcomesOf(rows), err
}

// RowsOf returns the keys of the rows of a projection that a stream
// instance feeds: the rows its events address, in the order of the first
// event addressing each.
func (h *Host) RowsOf(ctx context.Context, projection string, ref InstanceRef) ([]abi.Item, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	return e.RowsOf(ctx, apply.InstanceRef{Source: ref.Source, StreamID: ref.StreamID})
}

// Row reads a projection's row by key, strongly consistent; false when
// there is none. A removed row (a tombstone) is reported as absent.
func (h *Host) Row(ctx context.Context, projection string, key abi.Item) (abi.Item, bool, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, false, err
	}
	return e.Row(ctx, key)
}

// RequestCounts returns the DynamoDB requests the host has sent so far, by
// operation name (GetItem, BatchGetItem, PutItem, Query, ...).
func (h *Host) RequestCounts() map[string]int64 { return h.db.Counts() }

// ThrottledRequests returns the DynamoDB request attempts the host's
// client saw throttled so far (ProvisionedThroughputExceededException,
// ThrottlingException, RequestLimitExceeded), by operation name. The
// client retries them with backoff, so a batch that succeeded may have
// been slowed by them: this is what says so.
func (h *Host) ThrottledRequests() map[string]int64 { return h.db.Throttled() }

// ResetRequestCounts sets every request count back to zero.
func (h *Host) ResetRequestCounts() { h.db.ResetCounts() }

// streamIDs returns the ids of a stream's instances in the event store, in
// scan order, each once. Items marked as the stream's events whose key is
// not their streamId's and version's are left out and returned as an
// *EventItemsError, with the ids of the others.
func (h *Host) streamIDs(ctx context.Context, stream string) ([]string, error) {
	st, err := h.stream(stream)
	if err != nil {
		return nil, err
	}
	l := h.es.Layout()
	items := &eventItems{layout: l, stream: st}
	seen := map[string]bool{}
	var ids []string
	err = h.scan(ctx, store.Scan{
		Table: h.es.Table(), Filter: "#m = :m", Projection: "#id, #v, #pk, #sk",
		Names: map[string]string{"#m": eventstore.AttrMarker, "#id": eventstore.AttrStreamID, "#v": eventstore.AttrVersion,
			"#pk": l.PKName(), "#sk": l.SKName()},
		Values: map[string]abi.Value{":m": abi.S(l.Marker(stream))},
	}, func(it abi.Item) {
		if !items.check(it) {
			return
		}
		if id := it[eventstore.AttrStreamID].Str; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("scanning the event store for %s streams: %w", stream, err)
	}
	return ids, items.err()
}

// scan runs a Scan to its end, calling f with each item.
func (h *Host) scan(ctx context.Context, sc store.Scan, f func(abi.Item)) error {
	for {
		page, err := h.db.Scan(ctx, sc)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			f(it)
		}
		if page.LastKey == nil {
			return nil
		}
		sc.StartKey = page.LastKey
	}
}

// ApplyEvents folds events into a projection's rows as a batch of the change
// feed would, for callers that decode the feed themselves: per row it sorts,
// de-duplicates, reads, fills gaps and writes once. An outcome's Positions
// are indexes into events. It never fails as a whole; each row has its
// outcome.
func (h *Host) ApplyEvents(ctx context.Context, projection string, events ...abi.Event) (ProjectionResult, error) {
	e, err := h.engine(projection)
	if err != nil {
		return ProjectionResult{}, err
	}
	in := make([]apply.Input, len(events))
	for i, ev := range events {
		in[i] = apply.Input{Event: ev, Pos: i}
	}
	return projectionResultOf(e.ApplyBatch(ctx, in)), nil
}

// TableReport is what CreateTables found or did for one table.
type TableReport struct {
	Table         string
	Role          string // "event store" or "projection NAME"
	Created       bool   // it did not exist and was created
	StreamEnabled bool   // it existed without a stream, and one was enabled

	// IndexesAdded lists the indexes it existed without and that were added
	// (an outbox's index); DynamoDB builds them in the background.
	IndexesAdded []string
	// Tagged lists the tags (keys) it was created with or that were added
	// to it: a read-model table is labelled derived state (DerivedTags).
	Tagged []string

	// Kinesis is set on the event table's report when the configuration
	// streams it to a Kinesis data stream (sidecar.kinesis).
	Kinesis *KinesisReport
}

// CreateTables creates the tables the configuration names and that do not
// exist yet: the event table with a NEW_IMAGE stream and each projection's
// read-model table (string key attributes, on-demand capacity), with its
// outbox's table and index when configured, the quarantine table, and the
// sidecar's lease table when the configuration has a sidecar section; with
// sidecar.kinesis, the Kinesis stream (created on-demand when it does not
// exist) is made the event table's streaming destination. It is
// idempotent: existing tables are left as they are, except that an event
// table without a stream gets one, a table without an index it needs gets
// it, and a read-model table without the derived-state tags (DerivedTags)
// gets them. A host built WithEventStoreOnly creates
// the projections' tables too.
func (h *Host) CreateTables(ctx context.Context) ([]TableReport, error) {
	specs := h.cfg.tableSpecs()
	var out []TableReport
	done := map[string]bool{}
	for i, s := range specs {
		if done[s.spec.Name] {
			continue
		}
		done[s.spec.Name] = true
		s.spec.Indexes = mergeIndexes(s.spec, specs[i+1:], func(w tableWant) dynamo.TableSpec { return w.spec })
		st, err := h.db.EnsureTable(ctx, s.spec)
		if err != nil {
			return out, err
		}
		out = append(out, TableReport{Table: s.spec.Name, Role: s.role, Created: st.Created, StreamEnabled: st.StreamEnabled, IndexesAdded: st.IndexesAdded, Tagged: st.TagsAdded})
	}
	if sc := h.cfg.Sidecar; sc != nil && sc.Kinesis != nil {
		rep, err := h.ensureKinesis(ctx, *sc.Kinesis)
		if err != nil {
			return out, fmt.Errorf("the event table's Kinesis destination (sidecar.kinesis): %w", err)
		}
		out[0].Kinesis = &rep // the event table is first
	}
	return out, nil
}

// tableWant is a table the configuration names, and its role.
type tableWant struct {
	role string
	spec dynamo.TableSpec
}

// tableSpecs lists the tables the configuration names, in the order
// CreateTables creates them: the event table, each read model with its
// outbox, the quarantine table and the sidecar's on-failure tables, the
// lease table. A table may be listed more than once (shared read models).
func (c *Config) tableSpecs() []tableWant {
	type want = tableWant
	specs := []want{{"event store", dynamo.TableSpec{Name: c.EventStore.Table,
		KeyAttrs: []string{eventstore.AttrPK, eventstore.AttrSK}, Stream: true}}}
	for _, p := range c.Projections {
		specs = append(specs, want{"projection " + p.Name, dynamo.TableSpec{Name: p.Table, KeyAttrs: p.Key, Tags: c.derivedTags(p.Table)}})
		specs = outboxTables(specs, p, func(role string, spec dynamo.TableSpec) want { return want{role, spec} },
			func(w *want) *dynamo.TableSpec { return &w.spec })
	}
	if name, ok := c.quarantineTable(); ok {
		specs = append(specs, want{"quarantine", dynamo.TableSpec{Name: name, KeyAttrs: []string{QuarantineKeyAttribute}}})
	}
	if sc := c.Sidecar; sc != nil {
		for _, name := range sc.onFailureTables() {
			specs = append(specs, want{"on-failure quarantine", dynamo.TableSpec{Name: name, KeyAttrs: []string{QuarantineKeyAttribute}}})
		}
		if sc.LeaseTable != "" {
			specs = append(specs, want{"sidecar leases", dynamo.TableSpec{Name: sc.LeaseTable, KeyAttrs: []string{LeaseKeyAttr}}})
		}
	}
	return specs
}
