// Package wire is the DynamoDB JSON form of abi values: {"S":"x"},
// {"N":"12.5"}, {"M":{...}} and so on, as the AWS JSON 1.0 protocol carries
// them. Value and Item share their underlying types with abi.Value and
// abi.Item, so converting between them costs nothing.
package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Value is an abi.Value in DynamoDB JSON.
type Value abi.Value

// Item is an abi.Item in DynamoDB JSON.
type Item map[string]abi.Value

// MarshalJSON encodes the item as a JSON object of DynamoDB JSON values.
func (it Item) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	appendItem(&buf, it)
	return buf.Bytes(), nil
}

// UnmarshalJSON decodes a JSON object of DynamoDB JSON values.
func (it *Item) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return serialization(err)
	}
	out := make(Item, len(raw))
	for k, r := range raw {
		v, err := decode(r)
		if err != nil {
			return err
		}
		out[k] = v
	}
	*it = out
	return nil
}

// MarshalJSON encodes the value as DynamoDB JSON.
func (v Value) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	appendValue(&buf, abi.Value(v))
	return buf.Bytes(), nil
}

// UnmarshalJSON decodes DynamoDB JSON.
func (v *Value) UnmarshalJSON(b []byte) error {
	x, err := decode(b)
	if err != nil {
		return err
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

func serialization(err error) error {
	return apierr.New("SerializationException", 400, "%v", err)
}

func empty() error {
	return apierr.Validation("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes")
}

func decode(b []byte) (abi.Value, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return abi.Value{}, serialization(err)
	}
	if raw == nil {
		return abi.Value{}, empty()
	}
	if len(raw) > 1 {
		return abi.Value{}, apierr.Validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
	}
	for t, r := range raw {
		return decodeTyped(t, r)
	}
	return abi.Value{}, empty()
}

func decodeTyped(t string, r json.RawMessage) (abi.Value, error) {
	switch t {
	case "S", "N":
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return abi.Value{}, serialization(fmt.Errorf("%s must be a string: %w", t, err))
		}
		if t == "S" {
			return abi.S(s), nil
		}
		return abi.N(s), nil
	case "B":
		b, err := decodeBlob(r)
		return abi.B(b), err
	case "BOOL":
		var x bool
		if err := json.Unmarshal(r, &x); err != nil {
			return abi.Value{}, serialization(fmt.Errorf("BOOL must be a boolean: %w", err))
		}
		return abi.Bool(x), nil
	case "NULL":
		var x bool
		if err := json.Unmarshal(r, &x); err != nil {
			return abi.Value{}, serialization(fmt.Errorf("NULL must be a boolean: %w", err))
		}
		if !x {
			return abi.Value{}, apierr.Validation("One or more parameter values were invalid: Null attribute value types must have the value of true")
		}
		return abi.Null(), nil
	case "M":
		var it Item
		if err := it.UnmarshalJSON(r); err != nil {
			return abi.Value{}, err
		}
		return abi.M(abi.Item(it)), nil
	case "L":
		var raws []json.RawMessage
		if err := json.Unmarshal(r, &raws); err != nil {
			return abi.Value{}, serialization(fmt.Errorf("L must be a list: %w", err))
		}
		l := make([]abi.Value, len(raws))
		for i, x := range raws {
			v, err := decode(x)
			if err != nil {
				return abi.Value{}, err
			}
			l[i] = v
		}
		return abi.L(l...), nil
	case "SS", "NS":
		var ss []string
		if err := json.Unmarshal(r, &ss); err != nil {
			return abi.Value{}, serialization(fmt.Errorf("%s must be a list of strings: %w", t, err))
		}
		if ss == nil {
			ss = []string{}
		}
		if t == "SS" {
			return abi.SS(ss...), nil
		}
		return abi.NS(ss...), nil
	case "BS":
		var raws []json.RawMessage
		if err := json.Unmarshal(r, &raws); err != nil {
			return abi.Value{}, serialization(fmt.Errorf("BS must be a list: %w", err))
		}
		bs := make([][]byte, len(raws))
		for i, x := range raws {
			b, err := decodeBlob(x)
			if err != nil {
				return abi.Value{}, err
			}
			bs[i] = b
		}
		return abi.BS(bs...), nil
	}
	return abi.Value{}, empty()
}

func decodeBlob(r json.RawMessage) ([]byte, error) {
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		return nil, serialization(fmt.Errorf("B must be a base64 string: %w", err))
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, serialization(fmt.Errorf("B is not valid base64: %w", err))
	}
	return b, nil
}

func appendItem(buf *bytes.Buffer, it abi.Item) {
	keys := make([]string, 0, len(it))
	for k := range it {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		appendString(buf, k)
		buf.WriteByte(':')
		appendValue(buf, it[k])
	}
	buf.WriteByte('}')
}

func appendValue(buf *bytes.Buffer, v abi.Value) {
	switch v.Kind {
	case abi.KindS:
		buf.WriteString(`{"S":`)
		appendString(buf, v.Str)
	case abi.KindN:
		buf.WriteString(`{"N":`)
		appendString(buf, v.Str)
	case abi.KindB:
		buf.WriteString(`{"B":"`)
		buf.WriteString(base64.StdEncoding.EncodeToString(v.Bytes))
		buf.WriteByte('"')
	case abi.KindBOOL:
		if v.Bool {
			buf.WriteString(`{"BOOL":true`)
		} else {
			buf.WriteString(`{"BOOL":false`)
		}
	case abi.KindNULL:
		buf.WriteString(`{"NULL":true`)
	case abi.KindM:
		buf.WriteString(`{"M":`)
		appendItem(buf, v.Map)
	case abi.KindL:
		buf.WriteString(`{"L":[`)
		for i, e := range v.List {
			if i > 0 {
				buf.WriteByte(',')
			}
			appendValue(buf, e)
		}
		buf.WriteByte(']')
	case abi.KindSS, abi.KindNS:
		if v.Kind == abi.KindSS {
			buf.WriteString(`{"SS":[`)
		} else {
			buf.WriteString(`{"NS":[`)
		}
		for i, s := range v.Strs {
			if i > 0 {
				buf.WriteByte(',')
			}
			appendString(buf, s)
		}
		buf.WriteByte(']')
	case abi.KindBS:
		buf.WriteString(`{"BS":[`)
		for i, b := range v.Blobs {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteByte('"')
			buf.WriteString(base64.StdEncoding.EncodeToString(b))
			buf.WriteByte('"')
		}
		buf.WriteByte(']')
	default:
		buf.WriteString(`{"NULL":true`)
	}
	buf.WriteByte('}')
}

func appendString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // never fails for a string
	buf.Write(b)
}
