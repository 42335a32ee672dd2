package dynamo_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// everyKind is an item holding every DynamoDB type, nested, with a number at
// 38 significant digits and edge cases (empty string, empty binary, empty
// map and list).
func everyKind() abi.Item {
	return abi.Item{
		"pk":     abi.S("every"),
		"sk":     abi.S("kind"),
		"s":      abi.S("héllo ✓"),
		"empty":  abi.S(""),
		"n":      abi.N("12345678901234567890123456789012345678"),
		"nfrac":  abi.N("-0.000000000000000000000000000000000001"),
		"b":      abi.B([]byte{0, 1, 2, 255}),
		"bempty": abi.B([]byte{}),
		"t":      abi.Bool(true),
		"f":      abi.Bool(false),
		"null":   abi.Null(),
		"m": abi.M(abi.Item{
			"inner": abi.L(abi.S("x"), abi.N("1.5"), abi.M(nil), abi.L()),
			"deep":  abi.M(abi.Item{"n": abi.N("99999999999999999999999999999999999999")}),
		}),
		"l":  abi.L(abi.Null(), abi.Bool(false), abi.B([]byte("z")), abi.SS("a")),
		"ss": abi.SS("a", "b", "c"),
		"ns": abi.NS("1", "2.5", "-300000000000000000000000000000.25"),
		"bs": abi.BS([]byte("x"), []byte{0}),
	}
}

func TestConvert_RoundTripEveryKind(t *testing.T) {
	in := everyKind()
	av, err := ddbclient.ToAttributeMap(in)
	require.NoError(t, err)
	n, ok := av["n"].(*types.AttributeValueMemberN)
	require.True(t, ok, "N converts to an N member")
	assert.Equal(t, "12345678901234567890123456789012345678", n.Value, "N stays text")
	out, err := ddbclient.FromAttributeMap(av)
	require.NoError(t, err)
	assert.True(t, abi.ItemsEqual(in, out), "round trip changed the item:\n in %#v\nout %#v", in, out)
}

func TestConvert_InvalidValueIsError(t *testing.T) {
	_, err := ddbclient.ToAttributeMap(abi.Item{"x": {}})
	require.ErrorIs(t, err, dynamo.ErrInvalidValue)
	_, err = ddbclient.FromAttributeValue(nil)
	require.ErrorIs(t, err, dynamo.ErrInvalidValue)
	_, err = ddbclient.FromAttributeValue(&types.UnknownUnionMember{Tag: "X"})
	require.ErrorIs(t, err, dynamo.ErrInvalidValue)
}

// TestErrors_ThrottlingCodesMapToErrThrottled checks the mapping of every
// throttling code, for the codes a local server cannot be made to answer.
func TestErrors_ThrottlingCodesMapToErrThrottled(t *testing.T) {
	for _, code := range []string{"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"} {
		t.Run(code, func(t *testing.T) {
			orig := &smithy.GenericAPIError{Code: code, Message: "slow down"}
			err := dynamo.MapError("GetItem", fmt.Errorf("operation error: %w", orig))
			require.ErrorIs(t, err, store.ErrThrottled)
			var api smithy.APIError
			require.True(t, errors.As(err, &api), "the original error stays wrapped")
			assert.Equal(t, code, api.ErrorCode())
		})
	}
	err := dynamo.MapError("GetItem", &smithy.GenericAPIError{Code: "ValidationException"})
	assert.NotErrorIs(t, err, store.ErrThrottled)
}
