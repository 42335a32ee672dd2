package ddbjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/attrmap"
)

// ErrBadAttributeValue is matched by an attribute value in DynamoDB JSON
// that is not one of DynamoDB's types.
var ErrBadAttributeValue = errors.New("bad DynamoDB JSON attribute value")

// ValueFromJSON decodes one attribute value in DynamoDB JSON ({"S": "x"},
// {"N": "1.5"}, {"M": {...}}, ...). Numbers stay text, binaries are base64.
func ValueFromJSON(raw json.RawMessage) (abi.Value, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return abi.Value{}, fmt.Errorf("%w: %v", ErrBadAttributeValue, err)
	}
	if len(m) != 1 {
		return abi.Value{}, fmt.Errorf("%w: want exactly one type descriptor, got %d", ErrBadAttributeValue, len(m))
	}
	for desc, body := range m {
		return valueBody(desc, body)
	}
	panic("unreachable")
}

func valueBody(desc string, body json.RawMessage) (abi.Value, error) {
	bad := func(err error) (abi.Value, error) {
		return abi.Value{}, fmt.Errorf("%w: %s: %v", ErrBadAttributeValue, desc, err)
	}
	switch desc {
	case "S", "N":
		var s string
		if err := json.Unmarshal(body, &s); err != nil {
			return bad(err)
		}
		if desc == "S" {
			return abi.S(s), nil
		}
		return abi.N(s), nil
	case "B":
		var b []byte // encoding/json decodes base64 into []byte
		if err := json.Unmarshal(body, &b); err != nil {
			return bad(err)
		}
		if b == nil {
			b = []byte{}
		}
		return abi.B(b), nil
	case "BOOL":
		var b bool
		if err := json.Unmarshal(body, &b); err != nil {
			return bad(err)
		}
		return abi.Bool(b), nil
	case "NULL":
		var b bool
		if err := json.Unmarshal(body, &b); err != nil {
			return bad(err)
		}
		return abi.Null(), nil
	case "M":
		it, err := ItemFromJSON(body)
		if err != nil {
			return abi.Value{}, err
		}
		return abi.M(it), nil
	case "L":
		var raws []json.RawMessage
		if err := json.Unmarshal(body, &raws); err != nil {
			return bad(err)
		}
		l := make([]abi.Value, len(raws))
		for i, r := range raws {
			v, err := ValueFromJSON(r)
			if err != nil {
				return abi.Value{}, fmt.Errorf("list element %d: %w", i, err)
			}
			l[i] = v
		}
		return abi.L(l...), nil
	case "SS", "NS":
		var ss []string
		if err := json.Unmarshal(body, &ss); err != nil {
			return bad(err)
		}
		if desc == "SS" {
			return abi.SS(ss...), nil
		}
		return abi.NS(ss...), nil
	case "BS":
		var bs [][]byte
		if err := json.Unmarshal(body, &bs); err != nil {
			return bad(err)
		}
		return abi.BS(bs...), nil
	}
	return abi.Value{}, fmt.Errorf("%w: unknown type descriptor %q", ErrBadAttributeValue, desc)
}

// ItemFromJSON decodes an item (attribute name to DynamoDB JSON value).
// JSON null decodes to a nil item.
func ItemFromJSON(raw json.RawMessage) (abi.Item, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: item: %v", ErrBadAttributeValue, err)
	}
	return attrmap.Convert(m, ValueFromJSON)
}

// ValueToJSON encodes a value as DynamoDB JSON.
func ValueToJSON(v abi.Value) (json.RawMessage, error) {
	var body any
	switch v.Kind {
	case abi.KindS, abi.KindN:
		body = v.Str
	case abi.KindB:
		body = base64.StdEncoding.EncodeToString(v.Bytes)
	case abi.KindBOOL:
		body = v.Bool
	case abi.KindNULL:
		body = true
	case abi.KindM:
		m, err := ItemToJSON(v.Map)
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = json.RawMessage("{}")
		}
		body = m
	case abi.KindL:
		l := make([]json.RawMessage, len(v.List))
		for i, e := range v.List {
			r, err := ValueToJSON(e)
			if err != nil {
				return nil, err
			}
			l[i] = r
		}
		body = l
	case abi.KindSS, abi.KindNS:
		body = append([]string{}, v.Strs...)
	case abi.KindBS:
		bs := make([]string, len(v.Blobs))
		for i, b := range v.Blobs {
			bs[i] = base64.StdEncoding.EncodeToString(b)
		}
		body = bs
	default:
		return nil, fmt.Errorf("%w: kind %d has no JSON form", ErrBadAttributeValue, v.Kind)
	}
	return json.Marshal(map[string]any{v.Kind.String(): body})
}

// ItemToJSON encodes an item as DynamoDB JSON, attributes sorted (nil: null).
func ItemToJSON(it abi.Item) (json.RawMessage, error) {
	if it == nil {
		return nil, nil
	}
	names := make([]string, 0, len(it))
	for k := range it {
		names = append(names, k)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteByte(':')
		vj, err := ValueToJSON(it[k])
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		b.Write(vj)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
