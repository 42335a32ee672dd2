// Package wire is the DynamoDB JSON form of abi values in ddblocal's
// requests and responses: the project's one codec (internal/ddbjson), with
// its errors answered as DynamoDB answers them. Value and Item share their
// underlying types with abi.Value and abi.Item, so converting costs nothing.
package wire

import (
	"bytes"
	"errors"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// Value is an abi.Value in DynamoDB JSON.
type Value abi.Value

// Item is an abi.Item in DynamoDB JSON.
type Item map[string]abi.Value

// MarshalJSON encodes the item as a JSON object of DynamoDB JSON values.
func (it Item) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	err := ddbjson.AppendItem(&buf, abi.Item(it))
	return buf.Bytes(), err
}

// UnmarshalJSON decodes a JSON object of DynamoDB JSON values.
func (it *Item) UnmarshalJSON(b []byte) error {
	out, err := ddbjson.DecodeItem(b)
	if err != nil {
		return apiError(err)
	}
	*it = Item(out)
	return nil
}

// MarshalJSON encodes the value as DynamoDB JSON.
func (v Value) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	err := ddbjson.AppendValue(&buf, abi.Value(v))
	return buf.Bytes(), err
}

// UnmarshalJSON decodes DynamoDB JSON.
func (v *Value) UnmarshalJSON(b []byte) error {
	x, err := ddbjson.DecodeValue(b)
	if err != nil {
		return apiError(err)
	}
	*v = Value(x)
	return nil
}

// Items converts a slice of wire items to abi items.
func Items(in []Item) []abi.Item {
	out := make([]abi.Item, len(in))
	for i, it := range in {
		out[i] = abi.Item(it)
	}
	return out
}

// apiError answers a decoding error as DynamoDB does: malformed JSON is a
// SerializationException, a value of no single valid type a
// ValidationException.
func apiError(err error) error {
	var de *ddbjson.DecodeError
	if !errors.As(err, &de) {
		return apierr.New("SerializationException", 400, "%v", err)
	}
	switch de.Kind {
	case ddbjson.Empty, ddbjson.UnknownType:
		return apierr.Validation("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes")
	case ddbjson.MultipleTypes:
		return apierr.Validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
	case ddbjson.NullFalse:
		return apierr.Validation("One or more parameter values were invalid: Null attribute value types must have the value of true")
	}
	return apierr.New("SerializationException", 400, "%v", err)
}
