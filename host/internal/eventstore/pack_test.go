package eventstore_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/eventstore"
)

var tenantStream = eventstore.Stream{Name: "Order", Composite: []string{"tenantId", "orderId"}}

func sampleEvent(id string) abi.Event {
	return abi.Event{Stream: "Order", StreamID: id, Version: 3, Type: "OrderPlaced",
		Data: abi.Item{"_tag": abi.S("OrderPlaced"), "total": abi.N("12.50"), "blob": abi.B([]byte{0, 1, 2}),
			"tags": abi.SS("a", "b"), "nested": abi.M(abi.Item{"x": abi.L(abi.Bool(true), abi.Null())})},
		Timestamp: "2026-01-01T00:00:00.000Z"}
}

// TestES6_PackedDataRoundTripsThroughEveryBuiltinCodec: packed data is B
// with dataCodec, every DynamoDB type survives, and MinBytes keeps small
// data a map.
func TestES6_PackedDataRoundTripsThroughEveryBuiltinCodec(t *testing.T) {
	for _, codec := range []string{eventstore.CodecGzip, eventstore.CodecDeflate} {
		l := eventstore.DefaultLayout("shop", 1)
		ev := sampleEvent("t1#o1")
		it, err := l.PackedItem(ev, eventstore.Packing{Codec: codec})
		require.NoError(t, err)
		assert.Equal(t, abi.KindB, it["data"].Kind, codec)
		assert.Equal(t, codec, it["dataCodec"].Str)
		d, err := l.NewDecoder(tenantStream)
		require.NoError(t, err)
		got, ok, err := d.Decode(it)
		require.NoError(t, err, codec)
		require.True(t, ok)
		assert.True(t, abi.ItemsEqual(ev.Data, got.Event.Data), "%s: %v", codec, got.Event.Data)

		small, err := l.PackedItem(ev, eventstore.Packing{Codec: codec, MinBytes: 10_000})
		require.NoError(t, err)
		assert.Equal(t, abi.KindM, small["data"].Kind, "below MinBytes the data stays a map")
		_, has := small["dataCodec"]
		assert.False(t, has)
	}
}

// TestES4_PackedDataFailuresNameTheProblem: a packed item without a codec
// name, with an unknown one, or whose bytes do not decompress (or expand
// past the limit) is a *DecodeError naming the attribute.
func TestES4_PackedDataFailuresNameTheProblem(t *testing.T) {
	l := eventstore.DefaultLayout("shop", 1)
	d, err := l.NewDecoder(tenantStream)
	require.NoError(t, err)
	good, err := l.PackedItem(sampleEvent("t1#o1"), eventstore.Packing{Codec: "gzip"})
	require.NoError(t, err)

	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write(make([]byte, eventstore.MaxUnpackedBytes+1))
	require.NoError(t, zw.Close())

	cases := map[string]struct {
		change func(abi.Item)
		attr   string
		text   string
	}{
		"no codec":      {func(it abi.Item) { delete(it, "dataCodec") }, "dataCodec", "is missing"},
		"unknown codec": {func(it abi.Item) { it["dataCodec"] = abi.S("zstd") }, "dataCodec", `"zstd"`},
		"corrupt":       {func(it abi.Item) { it["data"] = abi.B([]byte("nope")) }, "data", "does not decompress"},
		"bomb":          {func(it abi.Item) { it["data"] = abi.B(bomb.Bytes()) }, "data", "more than"},
	}
	for name, c := range cases {
		it := abi.CloneItem(good)
		c.change(it)
		_, _, err := d.Decode(it)
		var de *eventstore.DecodeError
		require.True(t, errors.As(err, &de), "%s: %v", name, err)
		assert.Equal(t, c.attr, de.Attribute, name)
		assert.Contains(t, err.Error(), c.text, name)
	}
	it := abi.CloneItem(good)
	it["dataCodec"] = abi.S("zstd")
	_, _, err = d.Decode(it)
	assert.True(t, errors.Is(err, eventstore.ErrUnknownCodec) && errors.Is(err, eventstore.ErrDecode), "%v", err)

	reg := eventstore.NewCodecs()
	require.NoError(t, reg.Register("zstd", eventstore.CodecFuncs{
		CompressFunc:   func(b []byte) ([]byte, error) { return b, nil },
		DecompressFunc: func(b []byte) ([]byte, error) { return b, nil }}))
	l.Codecs = reg
	d2, err := l.NewDecoder(tenantStream)
	require.NoError(t, err)
	raw, err := l.PackedItem(sampleEvent("t1#o1"), eventstore.Packing{Codec: "zstd"})
	require.NoError(t, err)
	_, ok, err := d2.Decode(raw)
	assert.True(t, ok && err == nil, "a registered codec decodes: %v", err)
	assert.Contains(t, (&eventstore.UnknownCodecError{Name: "x", Known: reg.Names()}).Error(), `"zstd"`)
}

// TestES1_AmbiguousMultiFieldIDFailsToDecode: read back, a multi-field id
// that does not split into its composites is a decode error naming
// streamId; a single-field id may hold '#'.
func TestES1_AmbiguousMultiFieldIDFailsToDecode(t *testing.T) {
	l := eventstore.DefaultLayout("shop", 1)
	d, err := l.NewDecoder(tenantStream, eventstore.Stream{Name: "Sensor", Composite: []string{"sensorId"}})
	require.NoError(t, err)
	for _, id := range []string{"t1#o#1", "t1", "#o1", "t1#"} {
		_, _, err := d.Decode(l.Item(sampleEvent(id)))
		var de *eventstore.DecodeError
		require.True(t, errors.As(err, &de), "%q: %v", id, err)
		assert.Equal(t, "streamId", de.Attribute)
		assert.True(t, errors.Is(err, eventstore.ErrValidation), "%q: the cause is the id's validation error", id)
		assert.True(t, strings.Contains(err.Error(), "ambiguous") || strings.Contains(err.Error(), "empty"), "%v", err)
	}
	ev := sampleEvent("s#1")
	ev.Stream = "Sensor"
	got, ok, err := d.Decode(l.Item(ev))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "s#1", got.Event.StreamID)
}
