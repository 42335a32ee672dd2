package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/backoff"
	"github.com/dynafold/dynafold/internal/itemcheck"
)

// TransactLimit is the most items one TransactWriteItems may hold.
const TransactLimit = 100

// conflictAttempts bounds the tries of an append whose transaction was
// cancelled by a concurrent transaction (TransactionConflict): its outcome is
// then unknown, so it is tried again until a condition decides it.
const conflictAttempts = 5

// Store reads and appends events in one DynamoDB table.
type Store struct {
	db        store.DB
	table     string
	layout    Layout
	now       func() time.Time
	pageLimit int32
	packing   Packing
}

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock appends take their timestamp from.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithPageLimit sets the Limit of each Query page ReadFrom requests (0, the
// default, lets DynamoDB fill 1 MB pages).
func WithPageLimit(n int32) Option { return func(s *Store) { s.pageLimit = n } }

// WithPacking makes appends pack event data with p.Codec (one of the
// layout's Codecs) when its DynamoDB JSON has at least p.MinBytes bytes.
func WithPacking(p Packing) Option { return func(s *Store) { s.packing = p } }

// New returns a Store of table under layout.
func New(db store.DB, table string, layout Layout, opts ...Option) (*Store, error) {
	if err := layout.Validate(); err != nil {
		return nil, err
	}
	if table == "" {
		return nil, &ConfigError{Message: "a table name is required"}
	}
	s := &Store{db: db, table: table, layout: layout, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	if s.packing.Codec != "" {
		if _, err := layout.Codecs.Lookup(s.packing.Codec); err != nil {
			return nil, fmt.Errorf("eventstore: packing: %w", err)
		}
	}
	return s, nil
}

// Layout returns the store's item layout.
func (s *Store) Layout() Layout { return s.layout }

// Table returns the store's table name.
func (s *Store) Table() string { return s.table }

// Item returns the item an append stores for e: the layout's, with the
// data packed when the store packs and the data is large enough.
func (s *Store) Item(e abi.Event) (abi.Item, error) { return s.layout.PackedItem(e, s.packing) }

// NewEvent is an event to append.
type NewEvent struct {
	Type     string   // the event type; taken from Data's _tag when empty
	Data     abi.Item // the event's data; its _tag is set to Type
	Metadata abi.Item // optional
}

// Append appends events to a stream instance whose head is expectedVersion
// (0 for a new stream), as versions expectedVersion+1..., in ONE
// TransactWriteItems: each event's put is conditioned on its item
// not existing, and when expectedVersion > 0 a ConditionCheck requires the
// event at expectedVersion to exist, so appended versions are contiguous with
// the head. A stale or ahead expectedVersion fails with *VersionConflict
// (errors.Is ErrVersionConflict). An append needing more than 100 items
// (more than 100 events to a new stream, 99 to an existing one) is refused
// with *AppendTooLargeError, never split; an event whose item would be over
// DynamoDB's 400 KB with *ValidationError, unsent. It returns the appended
// events.
func (s *Store) Append(ctx context.Context, stream Stream, streamID string, expectedVersion uint64, events ...NewEvent) ([]abi.Event, error) {
	if err := stream.Validate(); err != nil {
		return nil, err
	}
	if _, err := stream.ParseID(streamID); err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, nil
	}
	check := 0
	if expectedVersion > 0 {
		check = 1
	}
	if n := len(events) + check; n > TransactLimit {
		return nil, &AppendTooLargeError{Stream: stream.Name, StreamID: streamID, Events: len(events), MaxEvents: TransactLimit - check, Count: n, Limit: TransactLimit}
	}
	if expectedVersion+uint64(len(events)) > MaxVersion {
		return nil, &ValidationError{Stream: stream.Name, Field: AttrVersion, Problem: fmt.Sprintf("versions above %d do not fit the sort key", uint64(MaxVersion))}
	}
	ts := s.now().UTC().Format(TimestampFormat)
	out := make([]abi.Event, len(events))
	writes := make([]store.Write, 0, len(events)+check)
	pkNames := map[string]string{"#pk": s.layout.PKName()}
	if check == 1 {
		writes = append(writes, store.Write{Check: &store.Check{
			Table: s.table,
			Key:   s.layout.Key(stream.Name, streamID, expectedVersion),
			Cond:  store.Cond{Expr: "attribute_exists(#pk)", Names: pkNames},
		}})
	}
	for i, ne := range events {
		e, err := s.event(stream, streamID, expectedVersion+uint64(i)+1, ts, ne)
		if err != nil {
			return nil, err
		}
		out[i] = e
		item, err := s.Item(e)
		if err != nil {
			return nil, err
		}
		if err := tooLarge(stream.Name, i, e.Type, item); err != nil {
			return nil, err
		}
		writes = append(writes, store.Write{Put: &store.Put{
			Table: s.table,
			Item:  item,
			Cond:  &store.Cond{Expr: "attribute_not_exists(#pk)", Names: pkNames},
		}})
	}
	var err error
	for attempt := 1; attempt <= conflictAttempts; attempt++ {
		err = s.db.TransactWriteItems(ctx, writes)
		if err == nil {
			return out, nil
		}
		var tx *store.TxCanceledError
		if errors.As(err, &tx) && versionConflict(tx.Reasons, len(writes)) {
			return nil, &VersionConflict{Stream: stream.Name, StreamID: streamID, Expected: expectedVersion, Err: err}
		}
		if !errors.Is(err, store.ErrConflict) || attempt == conflictAttempts {
			break
		}
		if werr := wait(ctx, attempt); werr != nil {
			return nil, werr
		}
	}
	return nil, fmt.Errorf("eventstore: append to %s %q at version %d: %w", stream.Name, streamID, expectedVersion, err)
}

// versionConflict reports a ConditionalCheckFailed among the append's items.
func versionConflict(reasons []string, n int) bool {
	for i, r := range reasons {
		if i < n && r == "ConditionalCheckFailed" {
			return true
		}
	}
	return false
}

// wait is the delay before retrying a TransactionConflict.
func wait(ctx context.Context, attempt int) error {
	return backoff.Policy{Base: 5 * time.Millisecond, Max: 100 * time.Millisecond}.Wait(ctx, attempt)
}

func (s *Store) event(stream Stream, streamID string, version uint64, ts string, ne NewEvent) (abi.Event, error) {
	typ := ne.Type
	tag, hasTag := ne.Data[AttrTag]
	if hasTag && tag.Kind != abi.KindS {
		return abi.Event{}, &ValidationError{Stream: stream.Name, Field: "data._tag", Problem: fmt.Sprintf("is of type %s, want S", tag.Kind)}
	}
	if typ == "" {
		typ = tag.Str
	}
	if typ == "" {
		return abi.Event{}, &ValidationError{Stream: stream.Name, Field: AttrEventType, Problem: "an event needs a type (NewEvent.Type or data._tag)"}
	}
	if hasTag && tag.Str != typ {
		return abi.Event{}, &ValidationError{Stream: stream.Name, Field: "data._tag", Problem: fmt.Sprintf("is %q but the event type is %q", tag.Str, typ)}
	}
	if !stream.HasEventType(typ) {
		return abi.Event{}, &ValidationError{Stream: stream.Name, Field: AttrEventType, Problem: fmt.Sprintf("%q is not one of the stream's event types %q", typ, stream.EventTypes)}
	}
	data := abi.CloneItem(ne.Data)
	if data == nil {
		data = abi.Item{}
	}
	data[AttrTag] = abi.S(typ)
	return abi.Event{Stream: stream.Name, StreamID: streamID, Version: version, Type: typ,
		Data: data, Metadata: abi.CloneItem(ne.Metadata), Timestamp: ts}, nil
}

// ReadFrom returns the events of a stream instance after afterVersion, up to
// and including toVersion (0: to the head), in version order. It
// reads strongly consistent and follows every page.
func (s *Store) ReadFrom(ctx context.Context, stream Stream, streamID string, afterVersion, toVersion uint64) ([]abi.Event, error) {
	if toVersion == 0 || toVersion > MaxVersion {
		toVersion = MaxVersion
	}
	if toVersion <= afterVersion {
		return nil, nil
	}
	q := store.Query{
		Table:   s.table,
		KeyCond: "#pk = :pk AND #sk BETWEEN :lo AND :hi",
		Names:   map[string]string{"#pk": s.layout.PKName(), "#sk": s.layout.SKName()},
		Values: map[string]abi.Value{
			":pk": abi.S(s.layout.PK(stream.Name, streamID)),
			":lo": abi.S(s.layout.SK(stream.Name, afterVersion+1)),
			":hi": abi.S(s.layout.SK(stream.Name, toVersion)),
		},
		Limit: s.pageLimit,
	}
	var out []abi.Event
	pre := s.layout.prefixes(stream.Name)
	for {
		page, err := s.db.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("eventstore: read %s %q after %d: %w", stream.Name, streamID, afterVersion, err)
		}
		if out == nil && page.LastKey == nil && len(page.Items) > 0 {
			out = make([]abi.Event, 0, len(page.Items)) // the one page: no growth
		}
		for _, it := range page.Items {
			e, err := s.layout.decodeEvent(stream, it, true, pre)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		if page.LastKey == nil {
			return out, nil
		}
		q.StartKey = page.LastKey
	}
}

// Head returns the latest version of a stream instance, 0 when it has no
// events: one strongly consistent query, backwards, Limit 1.
func (s *Store) Head(ctx context.Context, stream Stream, streamID string) (uint64, error) {
	page, err := s.db.Query(ctx, store.Query{
		Table:   s.table,
		KeyCond: "#pk = :pk AND begins_with(#sk, :prefix)",
		Names:   map[string]string{"#pk": s.layout.PKName(), "#sk": s.layout.SKName()},
		Values: map[string]abi.Value{
			":pk":     abi.S(s.layout.PK(stream.Name, streamID)),
			":prefix": abi.S(s.layout.SKPrefix(stream.Name)),
		},
		Limit:     1,
		Backwards: true,
	})
	if err != nil {
		return 0, fmt.Errorf("eventstore: head of %s %q: %w", stream.Name, streamID, err)
	}
	if len(page.Items) == 0 {
		return 0, nil
	}
	it := page.Items[0]
	v := it[AttrVersion]
	n, err := strconv.ParseUint(v.Str, 10, 64)
	if v.Kind != abi.KindN || err != nil {
		return 0, &DecodeError{Stream: stream.Name, PK: it[s.layout.PKName()].Str, SK: it[s.layout.SKName()].Str,
			Attribute: AttrVersion, Problem: fmt.Sprintf("is %s %q, want an integer N", v.Kind, v.Str), Hint: decodeHint}
	}
	// The head is a version of this instance only when the item's key is
	// the one its own stream id and version give.
	if attr, problem := s.layout.keyMismatch(stream.Name, s.layout.prefixes(stream.Name), it, it[AttrStreamID].Str, n); attr != "" {
		return 0, &DecodeError{Stream: stream.Name, PK: it[s.layout.PKName()].Str, SK: it[s.layout.SKName()].Str,
			Attribute: attr, Problem: problem, Hint: keyHint, Err: ErrKeyMismatch}
	}
	return n, nil
}

// tooLarge refuses the item of the append's index-th event (of type typ)
// when it is over DynamoDB's item limit, which would refuse the whole
// transaction with a bare ValidationException.
func tooLarge(stream string, index int, typ string, item abi.Item) error {
	n := itemcheck.Size(item)
	if n <= itemcheck.MaxItemSize {
		return nil
	}
	hint := `pack event data with eventStore.compression ({"codec": "gzip"}; see "Packed data" in docs/EVENTS.md), or keep large data out of events (in S3, say, with a reference in the event)`
	if c, ok := item[AttrDataCodec]; ok {
		hint = fmt.Sprintf("its data is packed (%s) and still too large: keep large data out of events (in S3, say, with a reference in the event)", c.Str)
	}
	return &ValidationError{Stream: stream, Field: fmt.Sprintf("event %d (%s)", index, typ),
		Problem: fmt.Sprintf("its item is %d bytes, over DynamoDB's item limit of %d bytes (400 KB): %s", n, itemcheck.MaxItemSize, hint)}
}
