package decode_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

func TestDecode_RecordJSONRoundTrip(t *testing.T) {
	recs := batch(t)
	assert.Equal(t, time.Unix(1795953600, 0).UTC(), recs[0].DynamoDB.ApproximateCreationDateTime)
	assert.Equal(t, "arn:aws:dynamodb:us-east-1:000000000000:table/events/stream/2026-11-29T00:00:00.000", recs[0].EventSourceARN)
	assert.Equal(t, int64(210), recs[0].DynamoDB.SizeBytes)
	assert.Equal(t, &decode.UserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}, recs[4].UserIdentity)
	data := recs[8].DynamoDB.NewImage["data"].Map
	assert.Equal(t, abi.B([]byte{0, 1, 2, 255}), data["blob"])
	assert.Equal(t, abi.NS("1", "2.5", "-99999999999999999999999999999999999999"), data["nums"])

	out, err := json.Marshal(map[string]any{"Records": recs})
	require.NoError(t, err)
	again, err := decode.ParseEvent(out)
	require.NoError(t, err)
	require.Len(t, again, len(recs))
	for i := range recs {
		assert.Equal(t, recs[i].EventID, again[i].EventID)
		assert.True(t, recs[i].DynamoDB.ApproximateCreationDateTime.Equal(again[i].DynamoDB.ApproximateCreationDateTime))
		assert.True(t, abi.ItemsEqual(recs[i].DynamoDB.NewImage, again[i].DynamoDB.NewImage), "record %d NewImage", i)
		assert.True(t, abi.ItemsEqual(recs[i].DynamoDB.OldImage, again[i].DynamoDB.OldImage), "record %d OldImage", i)
		assert.True(t, abi.ItemsEqual(recs[i].DynamoDB.Keys, again[i].DynamoDB.Keys), "record %d Keys", i)
		assert.Equal(t, recs[i].UserIdentity, again[i].UserIdentity)
		assert.Equal(t, recs[i].DynamoDB.SequenceNumber, again[i].DynamoDB.SequenceNumber)
	}
}

func TestDecode_ParseEventAcceptsABareArrayAndRejectsOtherShapes(t *testing.T) {
	recs, err := decode.ParseEvent([]byte(`[{"eventID":"x","eventName":"INSERT","dynamodb":{"SequenceNumber":"1","NewImage":{"a":{"S":"b"}}}}]`))
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, abi.Item{"a": abi.S("b")}, recs[0].DynamoDB.NewImage)

	_, err = decode.ParseEvent([]byte(`{"Items": []}`))
	require.Error(t, err, "no Records array")
	_, err = decode.ParseEvent([]byte(`{"Records": [{"dynamodb": {"NewImage": {"a": {"X": "1"}}}}]}`))
	require.ErrorIs(t, err, ddbjson.ErrBadAttributeValue)
	_, err = decode.ParseEvent([]byte(`{"Records": [{"dynamodb": {"NewImage": {"a": {"S": "1", "N": "1"}}}}]}`))
	require.ErrorIs(t, err, ddbjson.ErrBadAttributeValue)
	_, err = decode.ParseEventFile("testdata/missing.json")
	require.Error(t, err)
}

func TestDecode_ValueJSONEveryKind(t *testing.T) {
	v := abi.M(abi.Item{
		"s": abi.S("x"), "n": abi.N("-1.50"), "b": abi.B([]byte{9}), "t": abi.Bool(true), "z": abi.Null(),
		"l": abi.L(abi.SS("a"), abi.NS("1"), abi.BS([]byte{1}, []byte{})), "m": abi.M(nil),
	})
	raw, err := ddbjson.ValueToJSON(v)
	require.NoError(t, err)
	back, err := ddbjson.ValueFromJSON(raw)
	require.NoError(t, err)
	assert.True(t, v.Equal(back), "%s", raw)
	_, err = ddbjson.ValueToJSON(abi.Value{})
	require.ErrorIs(t, err, ddbjson.ErrBadAttributeValue)
}
