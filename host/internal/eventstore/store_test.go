package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

var fixedNow = time.Date(2026, 11, 29, 12, 0, 0, 123_000_000, time.UTC)

type fixture struct {
	db    *dynamo.DB
	table string
	es    *eventstore.Store
}

func newFixture(t *testing.T, opts ...eventstore.Option) fixture {
	t.Helper()
	db := dynamo.New(dynamotest.Client(t))
	table := dynamotest.CreateTable(t, db.Client(), "events")
	opts = append([]eventstore.Option{eventstore.WithClock(func() time.Time { return fixedNow })}, opts...)
	es, err := eventstore.New(db, table, eventstore.DefaultLayout("shop", 1), opts...)
	require.NoError(t, err)
	db.ResetCounts()
	return fixture{db: db, table: table, es: es}
}

// seed writes events with plain PutItems (the layout's items), for tests
// about reading that must not depend on TransactWriteItems.
func (f fixture) seed(t *testing.T, s eventstore.Stream, id string, from, to uint64) []abi.Event {
	t.Helper()
	var out []abi.Event
	for v := from; v <= to; v++ {
		e := abi.Event{Stream: s.Name, StreamID: id, Version: v, Type: s.EventTypes[0],
			Data:      abi.Item{"_tag": abi.S(s.EventTypes[0]), "n": abi.N(fmt.Sprint(v))},
			Timestamp: fixedNow.Format(eventstore.TimestampFormat)}
		require.NoError(t, f.db.PutItem(context.Background(), store.Put{Table: f.table, Item: f.es.Layout().Item(e)}))
		out = append(out, e)
	}
	f.db.ResetCounts()
	return out
}

func placed(customer string) eventstore.NewEvent {
	return eventstore.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S(customer)}}
}

func added(sku, price string) eventstore.NewEvent {
	return eventstore.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S(sku), "price": abi.N(price)}}
}

// appendOrSkip appends, skipping the test when the server has no transactions.
func appendOrSkip(t *testing.T, f fixture, id string, expected uint64, evs ...eventstore.NewEvent) []abi.Event {
	t.Helper()
	out, err := f.es.Append(context.Background(), orderStream, id, expected, evs...)
	dynamotest.SkipIfUnsupported(t, err)
	require.NoError(t, err)
	return out
}

func TestES2_AppendIsOneTransactionWithContiguityCheck(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	got := appendOrSkip(t, f, "O-1", 0, placed("c"), added("A", "1.5"), added("B", "2"))
	require.Len(t, got, 3)
	for i, e := range got {
		assert.Equal(t, uint64(i+1), e.Version)
		assert.Equal(t, "O-1", e.StreamID)
		assert.Equal(t, e.Type, e.Data["_tag"].Str)
	}
	assert.Equal(t, int64(1), f.db.Counts()["TransactWriteItems"], "three events, one transaction")

	// Ahead of the head: the ConditionCheck on version 5 fails, nothing is written.
	_, err := f.es.Append(ctx, orderStream, "O-1", 5, added("C", "1"))
	var vc *eventstore.VersionConflict
	require.True(t, errors.As(err, &vc), "want *VersionConflict, got %v", err)
	assert.ErrorIs(t, err, eventstore.ErrVersionConflict)
	assert.Equal(t, eventstore.VersionConflict{Stream: "Order", StreamID: "O-1", Expected: 5}, eventstore.VersionConflict{Stream: vc.Stream, StreamID: vc.StreamID, Expected: vc.Expected})
	// Stale: version 3 exists already.
	_, err = f.es.Append(ctx, orderStream, "O-1", 2, added("C", "1"))
	require.ErrorIs(t, err, eventstore.ErrVersionConflict)

	head, err := f.es.Head(ctx, orderStream, "O-1")
	require.NoError(t, err)
	assert.Equal(t, uint64(3), head, "conflicting appends wrote nothing")

	more := appendOrSkip(t, f, "O-1", 3, added("C", "3"), eventstore.NewEvent{Type: "OrderShipped"})
	assert.Equal(t, uint64(4), more[0].Version)
	assert.Equal(t, uint64(5), more[1].Version)
	all, err := f.es.ReadFrom(ctx, orderStream, "O-1", 0, 0)
	require.NoError(t, err)
	require.Len(t, all, 5)
	for i, e := range all {
		assert.Equal(t, uint64(i+1), e.Version)
	}
}

func TestES2_ConcurrentAppendConflict(t *testing.T) {
	f := newFixture(t)
	appendOrSkip(t, f, "O-7", 0, placed("c"))
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.es.Append(context.Background(), orderStream, "O-7", 1, added(fmt.Sprint("sku-", i), "1"))
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		assert.ErrorIs(t, err, eventstore.ErrVersionConflict)
	}
	assert.Equal(t, 1, wins, "exactly one concurrent append at version 1 wins")
	head, err := f.es.Head(context.Background(), orderStream, "O-7")
	require.NoError(t, err)
	assert.Equal(t, uint64(2), head)
}

func TestES2_AppendTooLargeIsRefusedUnsent(t *testing.T) {
	f := newFixture(t)
	evs := make([]eventstore.NewEvent, 100)
	for i := range evs {
		evs[i] = added("x", "1")
	}
	// 100 events at version 0 fit; at version 3 the ConditionCheck makes 101.
	_, err := f.es.Append(context.Background(), orderStream, "O-2", 3, evs...)
	var tl *eventstore.AppendTooLargeError
	require.True(t, errors.As(err, &tl), "want *AppendTooLargeError, got %v", err)
	assert.Equal(t, 101, tl.Count)
	assert.Equal(t, 100, tl.Events)
	assert.Equal(t, 99, tl.MaxEvents, "one item checks the expected version")
	assert.ErrorIs(t, err, eventstore.ErrAppendTooLarge)
	assert.Empty(t, f.db.Counts(), "nothing is sent")
}

func TestES2_AppendValidatesEvents(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for name, ev := range map[string]eventstore.NewEvent{
		"undeclared type":  {Type: "OrderLost"},
		"no type":          {Data: abi.Item{"x": abi.S("y")}},
		"tag differs":      {Type: "OrderPlaced", Data: abi.Item{"_tag": abi.S("ItemAdded")}},
		"tag not a string": {Data: abi.Item{"_tag": abi.N("1")}},
	} {
		_, err := f.es.Append(ctx, orderStream, "O-3", 0, ev)
		assert.ErrorIs(t, err, eventstore.ErrValidation, name)
	}
	_, err := f.es.Append(ctx, sensorStream, "a#b#c", 0, eventstore.NewEvent{Type: "SensorPlaced"})
	assert.ErrorIs(t, err, eventstore.ErrValidation, "ambiguous multi-field id")
	assert.Empty(t, f.db.Counts(), "nothing is sent")
}

func TestES3_ReadFromPaginatedConsistent(t *testing.T) {
	f := newFixture(t, eventstore.WithPageLimit(4))
	ctx := context.Background()
	want := f.seed(t, orderStream, "O-9", 1, 25)
	f.seed(t, orderStream, "O-10", 1, 3) // another instance, not read

	got, err := f.es.ReadFrom(ctx, orderStream, "O-9", 0, 0)
	require.NoError(t, err)
	require.Len(t, got, 25)
	for i := range want {
		assert.Equal(t, want[i], got[i])
	}
	assert.GreaterOrEqual(t, f.db.Counts()["Query"], int64(7), "25 events in pages of 4")

	got, err = f.es.ReadFrom(ctx, orderStream, "O-9", 10, 15)
	require.NoError(t, err)
	require.Len(t, got, 5)
	assert.Equal(t, uint64(11), got[0].Version)
	assert.Equal(t, uint64(15), got[4].Version)

	got, err = f.es.ReadFrom(ctx, orderStream, "O-9", 25, 0)
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = f.es.ReadFrom(ctx, orderStream, "O-9", 7, 7)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestES3_HeadIsLatestVersion(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	head, err := f.es.Head(ctx, orderStream, "none")
	require.NoError(t, err)
	assert.Equal(t, uint64(0), head)
	f.seed(t, orderStream, "O-4", 1, 12)
	// A snapshot sorts after the events in the partition; Head must skip it.
	require.NoError(t, f.db.PutItem(ctx, store.Put{Table: f.table, Item: abi.Item{
		"pk": abi.S("$shop#v1#order#o-4"), "sk": abi.S("$shop#v1#order.snapshot"), "__edd_e__": abi.S("order.snapshot")}}))
	f.db.ResetCounts()
	head, err = f.es.Head(ctx, orderStream, "O-4")
	require.NoError(t, err)
	assert.Equal(t, uint64(12), head)
	assert.Equal(t, map[string]int64{"Query": 1}, f.db.Counts(), "one query")
}

func TestES1_UpperCaseAndMultiFieldIDsRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	id, err := sensorStream.JoinID("Site-9", "S-1")
	require.NoError(t, err)
	_, err = f.es.Append(ctx, sensorStream, id, 0, eventstore.NewEvent{Type: "SensorPlaced", Data: abi.Item{"zone": abi.S("Z")}})
	dynamotest.SkipIfUnsupported(t, err)
	require.NoError(t, err)
	got, err := f.es.ReadFrom(ctx, sensorStream, id, 0, 0)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "Site-9#S-1", got[0].StreamID, "the streamId attribute keeps the original case")
	fields, err := sensorStream.ParseID(got[0].StreamID)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"siteId": "Site-9", "sensorId": "S-1"}, fields)

	raw, err := f.db.GetItem(ctx, f.table, f.es.Layout().Key("Sensor", id, 1))
	require.NoError(t, err)
	require.NotNil(t, raw)
	assert.Equal(t, "$shop#v1#sensor#site-9#s-1", raw["pk"].Str)
}

func TestES6_DefaultLayout(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.es.Append(ctx, orderStream, "O-1", 0, eventstore.NewEvent{Type: "OrderPlaced",
		Data: abi.Item{"customer": abi.S("c-1")}, Metadata: abi.Item{"correlationId": abi.S("k")}})
	dynamotest.SkipIfUnsupported(t, err)
	require.NoError(t, err)
	raw, err := f.db.GetItem(ctx, f.table, abi.Item{"pk": abi.S("$shop#v1#order#o-1"), "sk": abi.S("$shop#v1#order.event_1#0000000001")})
	require.NoError(t, err)
	require.NotNil(t, raw, "the event is stored under the effect-dynamodb keys")
	want := abi.Item{
		"pk":        abi.S("$shop#v1#order#o-1"),
		"sk":        abi.S("$shop#v1#order.event_1#0000000001"),
		"__edd_e__": abi.S("order.event"),
		"streamId":  abi.S("O-1"),
		"version":   abi.N("1"),
		"eventType": abi.S("OrderPlaced"),
		"data":      abi.M(abi.Item{"_tag": abi.S("OrderPlaced"), "customer": abi.S("c-1")}),
		"metadata":  abi.M(abi.Item{"correlationId": abi.S("k")}),
		"timestamp": abi.S("2026-11-29T12:00:00.123Z"),
	}
	assert.True(t, abi.ItemsEqual(want, raw), "stored item\n got %#v", raw)
}

func TestES4_StoredItemDecodesToTheAppendedEvent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	appended := appendOrSkip(t, f, "O-5", 0, placed("c"), added("A", "12345678901234567890.123456789"))
	d, err := eventstore.NewDecoder(orderStream, sensorStream)
	require.NoError(t, err)
	for _, e := range appended {
		raw, err := f.db.GetItem(ctx, f.table, f.es.Layout().Key("Order", "O-5", e.Version))
		require.NoError(t, err)
		got, ok, err := d.Decode(raw)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, e, got.Event)
	}
}
