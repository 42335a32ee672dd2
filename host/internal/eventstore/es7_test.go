package eventstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
)

var warehouseStream = eventstore.Stream{Name: "Warehouse", EventTypes: []string{"Stocked"}, Composite: []string{"warehouseId"}}

func stocked(id string, version uint64, qty string) abi.Event {
	return abi.Event{Stream: "Warehouse", StreamID: id, Version: version, Type: "Stocked",
		Data: abi.Item{"_tag": abi.S("Stocked"), "qty": abi.N(qty)}, Timestamp: "2026-11-29T12:00:00.000Z"}
}

// decodeErr decodes item and returns its *DecodeError, failing t when the
// item decodes.
func decodeErr(t *testing.T, d *eventstore.Decoder, item abi.Item) *eventstore.DecodeError {
	t.Helper()
	_, ok, err := d.Decode(item)
	require.False(t, ok, "the item must not decode")
	var de *eventstore.DecodeError
	require.True(t, errors.As(err, &de), "want *DecodeError, got %v", err)
	require.ErrorIs(t, err, eventstore.ErrDecode)
	return de
}

// TestES7_AnItemUnderAnotherInstancesKeyIsADecodeFailure: the case
// 1, an item put with the partition key of warehouse g-idmismatch but
// streamId "someone-else", fails to decode, naming both values; it is never
// an event of someone-else.
func TestES7_AnItemUnderAnotherInstancesKeyIsADecodeFailure(t *testing.T) {
	l := eventstore.DefaultLayout("inventory", 1)
	d, err := l.NewDecoder(warehouseStream)
	require.NoError(t, err)
	item := l.Item(stocked("someone-else", 1, "3"))
	item["pk"] = abi.S("$inventory#v1#warehouse#g-idmismatch")

	de := decodeErr(t, d, item)
	assert.Equal(t, "pk", de.Attribute)
	msg := de.Error()
	assert.Contains(t, msg, `"$inventory#v1#warehouse#g-idmismatch"`, "the stored key")
	assert.Contains(t, msg, `streamId "someone-else"`, "the stream id")
	assert.Contains(t, msg, `"$inventory#v1#warehouse#someone-else"`, "the key the stream id gives")
	assert.Contains(t, msg, "remove", "it says what to do")

	good := l.Item(stocked("someone-else", 1, "100"))
	got, ok, err := d.Decode(good)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "someone-else", got.Event.StreamID)
}

// TestES7_AnItemUnderAnotherVersionsKeyIsADecodeFailure: a sort key for
// version 2 on an item whose version attribute says 1.
func TestES7_AnItemUnderAnotherVersionsKeyIsADecodeFailure(t *testing.T) {
	l := eventstore.DefaultLayout("inventory", 1)
	d, err := l.NewDecoder(warehouseStream)
	require.NoError(t, err)
	item := l.Item(stocked("w-1", 1, "3"))
	item["sk"] = abi.S(l.SK("Warehouse", 2))

	de := decodeErr(t, d, item)
	assert.Equal(t, "sk", de.Attribute)
	assert.Contains(t, de.Error(), `"$inventory#v1#warehouse.event_1#0000000002"`)
	assert.Contains(t, de.Error(), "version 1")
	assert.Contains(t, de.Error(), `"$inventory#v1#warehouse.event_1#0000000001"`)

	delete(item, "sk")
	assert.Equal(t, "sk", decodeErr(t, d, item).Attribute, "a missing key attribute is no key of the event")
	item = l.Item(stocked("w-1", 1, "3"))
	item["pk"] = abi.N("1")
	assert.Equal(t, "pk", decodeErr(t, d, item).Attribute, "a key attribute of another type")
}

// TestES7_ACustomLayoutChecksTheKeysItDerives: with its own key attribute
// names and casing, a layout checks the keys it derives, not the default
// layout's.
func TestES7_ACustomLayoutChecksTheKeysItDerives(t *testing.T) {
	l := eventstore.Layout{Schema: "Inv", SchemaVersion: 2, Casing: eventstore.CasingPreserve, PKAttr: "PK", SKAttr: "SK"}
	d, err := l.NewDecoder(warehouseStream)
	require.NoError(t, err)
	item := l.Item(stocked("W-1", 4, "3"))
	require.Equal(t, "$Inv#v2#Warehouse#W-1", item["PK"].Str)
	got, ok, err := d.Decode(item)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, uint64(4), got.Event.Version)

	lower := abi.CloneItem(item)
	lower["PK"] = abi.S("$inv#v2#warehouse#w-1") // the default casing's key
	de := decodeErr(t, d, lower)
	assert.Equal(t, "PK", de.Attribute)
	assert.Contains(t, de.Error(), `"$Inv#v2#Warehouse#W-1"`)

	other := abi.CloneItem(item)
	other["SK"] = abi.S(l.SK("Warehouse", 5))
	assert.Equal(t, "SK", decodeErr(t, d, other).Attribute)
}

// TestES7_ReadFromRefusesAnItemWhoseIDIsAnotherInstances: a read of the
// stream instance whose partition holds an item naming another stream id
// fails with the decode error; the item is never returned as an event.
func TestES7_ReadFromRefusesAnItemWhoseIDIsAnotherInstances(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	l := f.es.Layout()
	require.NoError(t, f.db.PutItem(ctx, store.Put{Table: f.table, Item: l.Item(stocked("g-1", 1, "1"))}))
	stray := l.Item(stocked("someone-else", 2, "3"))
	stray["pk"] = abi.S(l.PK("Warehouse", "g-1"))
	require.NoError(t, f.db.PutItem(ctx, store.Put{Table: f.table, Item: stray}))

	evs, err := f.es.ReadFrom(ctx, warehouseStream, "g-1", 0, 0)
	var de *eventstore.DecodeError
	require.True(t, errors.As(err, &de), "want *DecodeError, got %v (events %v)", err, evs)
	assert.Equal(t, "pk", de.Attribute)
	assert.Contains(t, err.Error(), `streamId "someone-else"`)
	evs, err = f.es.ReadFrom(ctx, warehouseStream, "someone-else", 0, 0)
	require.NoError(t, err)
	assert.Empty(t, evs, "the stray item is no event of someone-else")

	_, err = f.es.Head(ctx, warehouseStream, "g-1")
	require.ErrorIs(t, err, eventstore.ErrDecode, "the head of g-1 is the stray item: no version of g-1")
}

// TestES7_KeysOfStreamIDsBeyondASCIIAreCheckedAsTheLayoutCasesThem: an id
// whose letters are not ASCII is cased by the layout as a whole; its own
// key decodes, another's does not, under every casing.
func TestES7_KeysOfStreamIDsBeyondASCIIAreCheckedAsTheLayoutCasesThem(t *testing.T) {
	for _, casing := range []eventstore.Casing{eventstore.CasingLower, eventstore.CasingUpper, eventstore.CasingPreserve} {
		l := eventstore.Layout{Schema: "Inv", SchemaVersion: 1, Casing: casing}
		d, err := l.NewDecoder(warehouseStream)
		require.NoError(t, err)
		item := l.Item(stocked("Über-Straße-1", 3, "1"))
		_, ok, err := d.Decode(item)
		require.NoError(t, err, "casing %d", casing)
		require.True(t, ok)
		item["pk"] = abi.S(l.PK("Warehouse", "Über-Straße-2"))
		assert.Equal(t, "pk", decodeErr(t, d, item).Attribute, "casing %d", casing)
	}
}
