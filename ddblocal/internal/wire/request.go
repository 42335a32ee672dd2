package wire

import (
	"bytes"
	"errors"
	"sync/atomic"

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
	itemLimits   = ddbjson.Limits{MaxItemSize: MaxItemSize, MaxDepth: MaxDepth, StrictBase64: true}
	valuesLimits = ddbjson.Limits{MaxValueSize: MaxItemSize, MaxDepth: MaxDepth, StrictBase64: true}
)

// RequestItem is an item or a key in a request. Decoding stops with
// DynamoDB's ValidationException as soon as the item passes 400 KB or 32
// levels of nesting, before the rest of it is built. (Numbers count 1
// byte while decoding; the exact size is checked once the item is built.)
// A value of no single valid type ({}, two types, {"NULL": false}) does
// not stop decoding: DynamoDB reports it only once it checks the item,
// after the request's parameters, so it is kept in Err.
type RequestItem struct {
	Item abi.Item
	Err  error // DynamoDB's ValidationException for a value of no valid type
	set  bool
}

// Set reports whether the request carried the item (not absent or null).
func (it RequestItem) Set() bool { return it.set }

// Value returns the item, or the error of its first invalid value.
func (it RequestItem) Value() (abi.Item, error) { return it.Item, it.Err }

// ItemOf returns a RequestItem holding item, as if a request carried it.
func ItemOf(item abi.Item) RequestItem { return RequestItem{Item: item, set: true} }

// UnmarshalJSON decodes a JSON object of DynamoDB JSON values within
// DynamoDB's item limits.
func (it *RequestItem) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		*it = RequestItem{}
		return nil
	}
	out, err := ddbjson.DecodeItemLimits(b, itemLimits)
	if err != nil {
		if deferred(err) {
			if _, verr := firstValueError(b); verr != nil {
				err = verr
			} else {
				err = requestError(err, false)
			}
			*it = RequestItem{Err: err, set: true}
			return nil
		}
		return requestError(err, false)
	}
	*it = RequestItem{Item: out, set: true}
	return nil
}

// wideItems is whether the last item a request brought (DecodeAt) had more
// attributes than a Go map's first group holds: a table's items mostly
// have one shape, so the next is counted before its map is made.
var wideItems atomic.Bool

// DecodeAt decodes the object at b[pos:] (b valid JSON) as UnmarshalJSON
// decodes it, without a scan for its end first, and returns where it
// ends; ok false when it does not decode without an error (nothing is
// set then: UnmarshalJSON on the object gives the error in its words).
func (it *RequestItem) DecodeAt(b []byte, pos int) (end int, ok bool) {
	was := wideItems.Load()
	out, end, wide, err := ddbjson.DecodeItemAtWide(b, pos, itemLimits, was)
	if err != nil {
		return 0, false
	}
	if wide != was {
		wideItems.Store(wide)
	}
	*it = RequestItem{Item: out, set: true}
	return end, true
}

// DecodeAtShared is DecodeAt with x's names: the keys of one request
// share their attribute names' strings.
func (it *RequestItem) DecodeAtShared(b []byte, pos int, x *ddbjson.ItemDecoder) (end int, ok bool) {
	out, end, err := x.DecodeAt(b, pos, itemLimits)
	if err != nil {
		return 0, false
	}
	*it = RequestItem{Item: out, set: true}
	return end, true
}

// MarshalJSON encodes the item as a JSON object of DynamoDB JSON values
// (a request item comes back in UnprocessedItems and UnprocessedKeys).
func (it RequestItem) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	err := ddbjson.AppendItem(&buf, it.Item)
	return buf.Bytes(), err
}

// RequestValues is the ExpressionAttributeValues of a request: decoding
// stops with DynamoDB's ValidationException as soon as one value passes
// 400 KB or 32 levels of nesting; a value of no valid type is kept in
// Err, as in RequestItem.
type RequestValues struct {
	Values map[string]abi.Value
	Err    error
	set    bool
}

// Set reports whether the request carried ExpressionAttributeValues.
func (v RequestValues) Set() bool { return v.set }

// UnmarshalJSON decodes a JSON object of DynamoDB JSON values, each within
// DynamoDB's item limits.
func (v *RequestValues) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		*v = RequestValues{}
		return nil
	}
	out, err := ddbjson.DecodeItemLimits(b, valuesLimits)
	if err != nil {
		if deferred(err) {
			// keep the placeholders: DynamoDB checks them before the values
			names := map[string]abi.Value{}
			for _, m := range members(b) {
				names[m.name] = abi.Value{}
			}
			if key, verr := firstValueError(b); verr != nil {
				err = apierr.Validation("ExpressionAttributeValues contains invalid value: %s for key %s", verr.(*apierr.Error).Message, key)
			} else {
				err = requestError(err, true)
			}
			*v = RequestValues{Values: names, Err: err, set: true}
			return nil
		}
		return requestError(err, true)
	}
	*v = RequestValues{Values: out, set: true}
	return nil
}

// RequestValue is one attribute value of a request's legacy parameters
// (Expected, AttributeUpdates, AttributeValueList), with its error kept
// as in RequestItem.
type RequestValue struct {
	Value abi.Value
	Err   error
	set   bool
}

// Set reports whether the request carried the value.
func (v RequestValue) Set() bool { return v.set }

// UnmarshalJSON decodes one DynamoDB JSON value within DynamoDB's limits.
func (v *RequestValue) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		*v = RequestValue{}
		return nil
	}
	out, err := ddbjson.DecodeValueLimits(b, valuesLimits)
	if err != nil {
		if deferred(err) {
			if verr := valueError(b); verr != nil {
				err = verr
			} else {
				err = requestError(err, false)
			}
			*v = RequestValue{Err: err, set: true}
			return nil
		}
		return requestError(err, false)
	}
	*v = RequestValue{Value: out, set: true}
	return nil
}

func isNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

// deferred reports whether a decoding error is one DynamoDB reports only
// when it checks the value: a value of no single valid type.
func deferred(err error) bool {
	var de *ddbjson.DecodeError
	if !errors.As(err, &de) {
		return false
	}
	switch de.Kind {
	case ddbjson.Empty, ddbjson.MultipleTypes, ddbjson.UnknownType, ddbjson.NullFalse:
		return true
	}
	return false
}

// requestError answers a decoding error as DynamoDB does; values tells
// that it came from ExpressionAttributeValues, whose messages name the
// placeholder.
func requestError(err error, values bool) error {
	var de *ddbjson.DecodeError
	if !errors.As(err, &de) {
		return apiError(err)
	}
	if de.Kind != ddbjson.TooLarge && de.Kind != ddbjson.TooDeep {
		ae := apiError(err)
		if values && de.Attr != "" {
			if e, ok := ae.(*apierr.Error); ok && e.Code == "ValidationException" {
				return apierr.Validation("ExpressionAttributeValues contains invalid value: %s for key %s", e.Message, de.Attr)
			}
		}
		return ae
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
