package streamsrecords_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/decode/streamsrecords"
)

func TestStreamsRecords_EveryTypeConverts(t *testing.T) {
	img := map[string]types.AttributeValue{
		"s":  &types.AttributeValueMemberS{Value: "x"},
		"n":  &types.AttributeValueMemberN{Value: "12345678901234567890123456789012345678"},
		"b":  &types.AttributeValueMemberB{Value: []byte{0, 255}},
		"t":  &types.AttributeValueMemberBOOL{Value: true},
		"z":  &types.AttributeValueMemberNULL{Value: true},
		"ss": &types.AttributeValueMemberSS{Value: []string{"a"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1.5"}},
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{1}}},
		"l":  &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}},
	}
	want := abi.Item{"s": abi.S("x"), "n": abi.N("12345678901234567890123456789012345678"), "b": abi.B([]byte{0, 255}),
		"t": abi.Bool(true), "z": abi.Null(), "ss": abi.SS("a"), "ns": abi.NS("1.5"), "bs": abi.BS([]byte{1}), "l": abi.L(abi.M(nil))}
	at := time.Unix(1795953600, 0)
	rec, err := streamsrecords.FromRecord(types.Record{
		EventID: aws.String("e"), EventName: types.OperationTypeRemove, EventSource: aws.String("aws:dynamodb"),
		UserIdentity: &types.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")},
		Dynamodb: &types.StreamRecord{ApproximateCreationDateTime: &at, OldImage: img, SequenceNumber: aws.String("9"),
			SizeBytes: aws.Int64(12), StreamViewType: types.StreamViewTypeNewAndOldImages},
	})
	require.NoError(t, err)
	assert.True(t, abi.ItemsEqual(want, rec.DynamoDB.OldImage), "got %#v", rec.DynamoDB.OldImage)
	assert.Nil(t, rec.DynamoDB.NewImage)
	assert.True(t, rec.IsTTLDeletion())
	assert.Equal(t, "9", rec.DynamoDB.SequenceNumber)
	assert.Equal(t, int64(12), rec.DynamoDB.SizeBytes)
	assert.True(t, at.Equal(rec.DynamoDB.ApproximateCreationDateTime))
	_, err = streamsrecords.Value(&types.UnknownUnionMember{Tag: "X"})
	require.ErrorIs(t, err, streamsrecords.ErrUnsupportedType)
}
