package eventstore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/eventstore"
)

func TestES6_DefaultLayoutKeys(t *testing.T) {
	l := eventstore.DefaultLayout("Shop", 1)
	require.NoError(t, l.Validate())
	assert.Equal(t, "$shop#v1#order#o-1", l.PK("Order", "O-1"), "the whole key is lower-cased")
	assert.Equal(t, "$shop#v1#sensor#site-9#s-1", l.PK("Sensor", "Site-9#s-1"))
	assert.Equal(t, "$shop#v1#order.event_1#0000000007", l.SK("Order", 7))
	assert.Equal(t, "$shop#v1#order.event_1#9999999999", l.SK("Order", eventstore.MaxVersion))
	assert.Equal(t, "$shop#v1#order.event_1#", l.SKPrefix("Order"))
	assert.Equal(t, "order.event", l.Marker("Order"))
	assert.Equal(t, "pk", l.PKName())
	assert.Equal(t, "sk", l.SKName())

	p := eventstore.Layout{Schema: "Shop", SchemaVersion: 2, Casing: eventstore.CasingPreserve, PKAttr: "PK", SKAttr: "SK"}
	assert.Equal(t, "$Shop#v2#Order#O-1", p.PK("Order", "O-1"))
	assert.Equal(t, "$Shop#v2#Order.event_1#0000000012", p.SK("Order", 12))
	assert.Equal(t, "order.event", p.Marker("Order"), "the marker is lower-cased whatever the casing")
	assert.Equal(t, abi.Item{"PK": abi.S("$Shop#v2#Order#O-1"), "SK": abi.S("$Shop#v2#Order.event_1#0000000001")}, p.Key("Order", "O-1", 1))

	require.ErrorIs(t, eventstore.Layout{}.Validate(), eventstore.ErrConfig)
}

func TestES6_ItemCarriesEveryAttribute(t *testing.T) {
	l := eventstore.DefaultLayout("shop", 1)
	e := abi.Event{Stream: "Order", StreamID: "O-1", Version: 3, Type: "ItemAdded",
		Data: abi.Item{"sku": abi.S("A"), "price": abi.N("12.50")}, Metadata: abi.Item{"by": abi.S("alice")},
		Timestamp: "2026-11-29T12:00:00.000Z"}
	want := abi.Item{
		"pk":        abi.S("$shop#v1#order#o-1"),
		"sk":        abi.S("$shop#v1#order.event_1#0000000003"),
		"__edd_e__": abi.S("order.event"),
		"streamId":  abi.S("O-1"),
		"version":   abi.N("3"),
		"eventType": abi.S("ItemAdded"),
		"data":      abi.M(abi.Item{"_tag": abi.S("ItemAdded"), "sku": abi.S("A"), "price": abi.N("12.50")}),
		"metadata":  abi.M(abi.Item{"by": abi.S("alice")}),
		"timestamp": abi.S("2026-11-29T12:00:00.000Z"),
	}
	got := l.Item(e)
	assert.True(t, abi.ItemsEqual(want, got), "got %#v", got)
	_, hasTag := e.Data["_tag"]
	assert.False(t, hasTag, "Item does not modify the event's data")

	d, err := l.NewDecoder(orderStream)
	require.NoError(t, err)
	back, ok, err := d.Decode(got)
	require.NoError(t, err)
	require.True(t, ok)
	e.Data = abi.Item{"_tag": abi.S("ItemAdded"), "sku": abi.S("A"), "price": abi.N("12.50")}
	assert.Equal(t, e, back.Event, "an item decodes back to its event")

	e.Metadata = nil
	_, has := l.Item(e)["metadata"]
	assert.False(t, has, "metadata is optional")
}
