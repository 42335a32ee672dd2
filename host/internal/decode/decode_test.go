package decode_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

var (
	orderStream  = eventstore.Stream{Name: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, Composite: []string{"orderId"}}
	sensorStream = eventstore.Stream{Name: "Sensor", EventTypes: []string{"SensorPlaced"}, Composite: []string{"siteId", "sensorId"}}
)

func batch(t *testing.T) []decode.Record {
	t.Helper()
	recs, err := decode.ParseEventFile("testdata/lambda_batch.json")
	require.NoError(t, err)
	require.Len(t, recs, 11)
	return recs
}

func decoder(t *testing.T) *eventstore.Decoder {
	t.Helper()
	d, err := eventstore.NewDecoder(orderStream, sensorStream)
	require.NoError(t, err)
	return d
}

func positions[T any](xs []T, pos func(T) int) []int {
	out := []int{}
	for _, x := range xs {
		out = append(out, pos(x))
	}
	return out
}

func TestB1_OnlyInsertsOfConfiguredStreamsBecomeEvents(t *testing.T) {
	res := decode.Decode(batch(t), decode.Options{Decoder: decoder(t), Source: decode.SourceLambda})

	assert.Equal(t, []int{0, 1, 8}, positions(res.Events, func(e decode.Event) int { return e.Position }))
	assert.Equal(t, []int{6, 9}, positions(res.Failures, func(f decode.DecodeFailure) int { return f.Position }))
	reasons := map[int]decode.Reason{}
	for _, ig := range res.Ignored {
		reasons[ig.Position] = ig.Reason
	}
	assert.Equal(t, map[int]decode.Reason{
		2: decode.ReasonNotAnEvent, 3: decode.ReasonModify, 4: decode.ReasonTTLDeletion,
		5: decode.ReasonRemove, 7: decode.ReasonNotAnEvent, 10: decode.ReasonTTLDeletion,
	}, reasons)

	e := res.Events[0]
	assert.Equal(t, "Order", e.Stream.Name)
	assert.Equal(t, abi.Event{Stream: "Order", StreamID: "O-1", Version: 2, Type: "ItemAdded",
		Data:      abi.Item{"_tag": abi.S("ItemAdded"), "sku": abi.S("A"), "price": abi.N("12345678901234567890.123456789")},
		Timestamp: "2026-11-29T12:00:00.000Z"}, e.Event)
	assert.Equal(t, abi.Item{"correlationId": abi.S("k-1")}, res.Events[1].Event.Metadata)
	assert.Equal(t, "Site-9#S-1", res.Events[2].Event.StreamID)

	var de *eventstore.DecodeError
	require.True(t, errors.As(res.Failures[0].Err, &de), "want *DecodeError, got %v", res.Failures[0].Err)
	assert.Equal(t, "version", de.Attribute)
	assert.ErrorIs(t, res.Failures[1].Err, decode.ErrNoImage)
	assert.Contains(t, res.Failures[1].Err.Error(), "KEYS_ONLY")
}

func TestB1_NoDecoderDecodesNoEvents(t *testing.T) {
	res := decode.Decode(batch(t), decode.Options{})
	assert.Empty(t, res.Events)
	assert.Equal(t, []int{9}, positions(res.Failures, func(f decode.DecodeFailure) int { return f.Position }), "only the image-less INSERT fails")
}

func TestB2_IdentifierBySource(t *testing.T) {
	recs := batch(t)
	lambda := decode.Decode(recs, decode.Options{Decoder: decoder(t)})
	assert.Equal(t, "100", lambda.Events[0].Identifier, "Lambda: dynamodb.SequenceNumber by default")
	assert.Equal(t, "106", lambda.Failures[0].Identifier)
	assert.Equal(t, "104", lambda.TTLDeletions()[0].Identifier)

	pipe := decode.Decode(recs, decode.Options{Decoder: decoder(t), Source: decode.SourcePipe})
	assert.Equal(t, "e-0", pipe.Events[0].Identifier, "Pipe: eventID")
	assert.Equal(t, "e-6", pipe.Failures[0].Identifier)

	require.Error(t, decode.Options{Source: "kinesis"}.Validate())
	require.NoError(t, decode.Options{Source: "kinesis", Identifier: func(any) string { return "" }}.Validate())
	require.Error(t, decode.Options{OnDecodeFailure: "drop"}.Validate())
}

// TestB2_CustomExtractorsReadAPipeInputTemplate reads records of a shape of
// our own: a Pipe input template that sends {"id": <eventID>, "image": <NewImage>}.
func TestB2_CustomExtractorsReadAPipeInputTemplate(t *testing.T) {
	raw := `[
	  {"id": "p-0", "image": {"__edd_e__": {"S": "order.event"}, "streamId": {"S": "O-1"}, "version": {"N": "1"},
	    "eventType": {"S": "OrderPlaced"}, "data": {"M": {"_tag": {"S": "OrderPlaced"}}}, "timestamp": {"S": "t"}}},
	  {"id": "p-1"},
	  {"id": "p-2", "image": {"__edd_e__": {"S": "order.event"}, "version": {"N": "x"}}}
	]`
	var shaped []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(raw), &shaped))
	records := make([]any, len(shaped))
	for i := range shaped {
		records[i] = shaped[i]
	}
	opts := decode.Options{
		Decoder: decoder(t),
		Image: func(r any) (abi.Item, bool) {
			img, ok := r.(map[string]json.RawMessage)["image"]
			if !ok {
				return nil, false
			}
			it, err := ddbjson.ItemFromJSON(img)
			return it, err == nil
		},
		Identifier: func(r any) string {
			var id string
			_ = json.Unmarshal(r.(map[string]json.RawMessage)["id"], &id)
			return id
		},
	}
	res := decode.DecodeRaw(records, opts)
	require.Len(t, res.Events, 1)
	assert.Equal(t, "p-0", res.Events[0].Identifier)
	assert.Equal(t, uint64(1), res.Events[0].Event.Version)
	require.Len(t, res.Ignored, 1)
	assert.Equal(t, decode.Ignored{Position: 1, Identifier: "p-1", Reason: decode.ReasonNoImage}, res.Ignored[0])
	require.Len(t, res.Failures, 1)
	assert.Equal(t, "p-2", res.Failures[0].Identifier)

	// Without extractors an unknown shape is a failure, not a silent skip.
	res = decode.DecodeRaw(records[:1], decode.Options{Decoder: decoder(t)})
	require.Len(t, res.Failures, 1)
	assert.ErrorIs(t, res.Failures[0].Err, decode.ErrUnknownShape)
	// Records (and pointers to them) need no extractors.
	recs := batch(t)
	res = decode.DecodeRaw([]any{recs[0], &recs[1]}, decode.Options{Decoder: decoder(t)})
	assert.Len(t, res.Events, 2)
}

func TestB4_OnDecodeFailureSkipStillListsTheFailure(t *testing.T) {
	recs := batch(t)
	report := decode.Decode(recs, decode.Options{Decoder: decoder(t)})
	assert.Len(t, report.Reported(), 2, "report is the default")
	skip := decode.Decode(recs, decode.Options{Decoder: decoder(t), OnDecodeFailure: decode.OnFailureSkip})
	require.Len(t, skip.Failures, 2, "skipped failures are still listed")
	for _, f := range skip.Failures {
		assert.True(t, f.Skipped)
	}
	assert.Empty(t, skip.Reported())
}

func TestX5_TTLDeletionIsNotAnEvent(t *testing.T) {
	recs := batch(t)
	require.True(t, recs[4].IsTTLDeletion())
	require.True(t, recs[10].IsTTLDeletion(), "a TTL deletion of an event-marked item")
	require.False(t, recs[5].IsTTLDeletion(), "a REMOVE by a user is not a TTL deletion")
	require.False(t, recs[0].IsTTLDeletion())

	// Even an extractor that returns the old image does not turn it into an event.
	res := decode.Decode(recs, decode.Options{Decoder: decoder(t), Image: func(r any) (abi.Item, bool) {
		rec := r.(decode.Record)
		if rec.DynamoDB.NewImage != nil {
			return rec.DynamoDB.NewImage, true
		}
		return rec.DynamoDB.OldImage, rec.DynamoDB.OldImage != nil
	}})
	assert.Equal(t, []int{4, 10}, positions(res.TTLDeletions(), func(i decode.Ignored) int { return i.Position }))
	for _, e := range res.Events {
		assert.NotEqual(t, 10, e.Position)
		assert.NotEqual(t, 4, e.Position)
	}
	for _, f := range res.Failures {
		assert.NotContains(t, []int{4, 10}, f.Position)
	}
}
