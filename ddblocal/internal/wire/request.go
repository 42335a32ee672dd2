package wire

import (
	"bytes"
	"errors"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// MaxItemSize is DynamoDB's limit on the size of an item, 400 KB.
const MaxItemSize = 400 * 1024

// MaxDepth is DynamoDB's limit on nesting: an attribute's value is level
// 1, and a value may sit at level 32 at the deepest.
const MaxDepth = 32

// MsgNesting is DynamoDB's message for a value nested deeper than MaxDepth.
const MsgNesting = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"

// MsgItemSize is DynamoDB's message for an item over MaxItemSize.
const MsgItemSize = "Item size has exceeded the maximum allowed size"

var (
	itemLimits   = ddbjson.Limits{MaxItemSize: MaxItemSize, MaxDepth: MaxDepth}
	valuesLimits = ddbjson.Limits{MaxValueSize: MaxItemSize, MaxDepth: MaxDepth}
)

// RequestItem is an item or a key in a request. Decoding stops with
// DynamoDB's ValidationException as soon as the item passes 400 KB or 32
// levels of nesting, before the rest of it is built. (Numbers count 1
// byte while decoding; the exact size is checked once the item is built.)
type RequestItem map[string]abi.Value

// UnmarshalJSON decodes a JSON object of DynamoDB JSON values within
// DynamoDB's item limits.
func (it *RequestItem) UnmarshalJSON(b []byte) error {
	out, err := ddbjson.DecodeItemLimits(b, itemLimits)
	if err != nil {
		return requestError(err, false)
	}
	*it = RequestItem(out)
	return nil
}

// MarshalJSON encodes the item as a JSON object of DynamoDB JSON values
// (a request item comes back in UnprocessedItems and UnprocessedKeys).
func (it RequestItem) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	err := ddbjson.AppendItem(&buf, abi.Item(it))
	return buf.Bytes(), err
}

// RequestValues is the ExpressionAttributeValues of a request: decoding
// stops with DynamoDB's ValidationException as soon as one value passes
// 400 KB or 32 levels of nesting.
type RequestValues map[string]abi.Value

// UnmarshalJSON decodes a JSON object of DynamoDB JSON values, each within
// DynamoDB's item limits.
func (v *RequestValues) UnmarshalJSON(b []byte) error {
	out, err := ddbjson.DecodeItemLimits(b, valuesLimits)
	if err != nil {
		return requestError(err, true)
	}
	*v = RequestValues(out)
	return nil
}

// requestError answers a decoding error as DynamoDB does; values tells
// that it came from ExpressionAttributeValues, whose messages name the
// placeholder.
func requestError(err error, values bool) error {
	var de *ddbjson.DecodeError
	if !errors.As(err, &de) || (de.Kind != ddbjson.TooLarge && de.Kind != ddbjson.TooDeep) {
		return apiError(err)
	}
	msg := MsgItemSize
	if de.Kind == ddbjson.TooDeep {
		msg = MsgNesting
	}
	if values {
		return apierr.Validation("ExpressionAttributeValues contains invalid value: %s for key %s", msg, de.Attr)
	}
	return apierr.Validation("%s", msg)
}
