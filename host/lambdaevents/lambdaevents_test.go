package lambdaevents_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambdaevents"
)

// TestLambdaEvents_ConvertsLikeTheJSONParser converts the captured batch as
// aws-lambda-go parses it and checks it matches decode's own parser, record
// for record (every attribute type is in the fixture).
func TestLambdaEvents_ConvertsLikeTheJSONParser(t *testing.T) {
	raw, err := os.ReadFile("../internal/decode/testdata/lambda_batch.json")
	require.NoError(t, err)
	var ev events.DynamoDBEvent
	require.NoError(t, json.Unmarshal(raw, &ev))
	got, err := lambdaevents.FromEvent(ev)
	require.NoError(t, err)
	want, err := host.ParseEvent(raw)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		assert.Equal(t, w.EventID, g.EventID)
		assert.Equal(t, w.EventName, g.EventName)
		assert.Equal(t, w.EventVersion, g.EventVersion)
		assert.Equal(t, w.EventSource, g.EventSource)
		assert.Equal(t, w.EventSourceARN, g.EventSourceARN)
		assert.Equal(t, w.AWSRegion, g.AWSRegion)
		assert.Equal(t, w.UserIdentity, g.UserIdentity)
		assert.True(t, w.DynamoDB.ApproximateCreationDateTime.Equal(g.DynamoDB.ApproximateCreationDateTime), "record %d time", i)
		assert.Equal(t, w.DynamoDB.SequenceNumber, g.DynamoDB.SequenceNumber)
		assert.Equal(t, w.DynamoDB.SizeBytes, g.DynamoDB.SizeBytes)
		assert.Equal(t, w.DynamoDB.StreamViewType, g.DynamoDB.StreamViewType)
		assert.True(t, abi.ItemsEqual(w.DynamoDB.Keys, g.DynamoDB.Keys), "record %d Keys", i)
		assert.True(t, abi.ItemsEqual(w.DynamoDB.NewImage, g.DynamoDB.NewImage), "record %d NewImage", i)
		assert.True(t, abi.ItemsEqual(w.DynamoDB.OldImage, g.DynamoDB.OldImage), "record %d OldImage", i)
	}
	assert.True(t, got[4].IsTTLDeletion())
}

func TestLambdaEvents_EveryTypeRoundTrips(t *testing.T) {
	it := abi.Item{
		"s": abi.S("x"), "n": abi.N("12345678901234567890123456789012345678"), "b": abi.B([]byte{0, 255}),
		"t": abi.Bool(true), "z": abi.Null(), "ss": abi.SS("a", "b"), "ns": abi.NS("1", "-0.5"),
		"bs": abi.BS([]byte{1}, []byte{2}), "l": abi.L(abi.N("1"), abi.M(abi.Item{"k": abi.S("v")}), abi.L()),
		"m": abi.M(abi.Item{"deep": abi.M(nil)}),
	}
	img, err := lambdaevents.ToImage(it)
	require.NoError(t, err)
	// Through aws-lambda-go's own JSON, as a handler would receive it.
	raw, err := json.Marshal(img)
	require.NoError(t, err)
	var parsed map[string]events.DynamoDBAttributeValue
	require.NoError(t, json.Unmarshal(raw, &parsed))
	back, err := lambdaevents.Item(parsed)
	require.NoError(t, err)
	assert.True(t, abi.ItemsEqual(it, back), "got %#v", back)
	_, err = lambdaevents.ToAttributeValue(abi.Value{})
	require.ErrorIs(t, err, lambdaevents.ErrUnsupportedType)
}
