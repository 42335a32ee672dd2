package ddbjson

// The decoder DecodeValue and DecodeItem had before the one-pass decoder:
// encoding/json into json.RawMessage, one level at a time. The tests keep
// it as the reference the one-pass decoder must agree with.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/dynafold/dynafold/abi"
)

// refDecodeValue is the old DecodeValue.
func refDecodeValue(b []byte) (abi.Value, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return abi.Value{}, syntax("", err)
	}
	switch {
	case len(raw) == 0:
		return abi.Value{}, &DecodeError{Kind: Empty}
	case len(raw) > 1:
		return abi.Value{}, &DecodeError{Kind: MultipleTypes}
	}
	for t, r := range raw {
		return refDecodeTyped(t, r)
	}
	panic("unreachable")
}

// refDecodeItem is the old DecodeItem.
func refDecodeItem(b []byte) (abi.Item, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, syntax("", err)
	}
	out := make(abi.Item, len(raw))
	for k, r := range raw {
		v, err := refDecodeValue(r)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

func refDecodeTyped(t string, r json.RawMessage) (abi.Value, error) {
	switch t {
	case "S", "N":
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return abi.Value{}, syntax(t, err)
		}
		if t == "S" {
			return abi.S(s), nil
		}
		return abi.N(s), nil
	case "B":
		b, err := refDecodeBlob(r)
		return abi.B(b), err
	case "BOOL", "NULL":
		var x bool
		if err := json.Unmarshal(r, &x); err != nil {
			return abi.Value{}, syntax(t, err)
		}
		if t == "BOOL" {
			return abi.Bool(x), nil
		}
		if !x {
			return abi.Value{}, &DecodeError{Kind: NullFalse, Type: t}
		}
		return abi.Null(), nil
	case "M":
		it, err := refDecodeItem(r)
		if err != nil {
			return abi.Value{}, err
		}
		return abi.M(it), nil
	case "L":
		var raws []json.RawMessage
		if err := json.Unmarshal(r, &raws); err != nil {
			return abi.Value{}, syntax(t, err)
		}
		l := make([]abi.Value, len(raws))
		for i, x := range raws {
			v, err := refDecodeValue(x)
			if err != nil {
				return abi.Value{}, err
			}
			l[i] = v
		}
		return abi.L(l...), nil
	case "SS", "NS":
		var ss []string
		if err := json.Unmarshal(r, &ss); err != nil {
			return abi.Value{}, syntax(t, err)
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
			return abi.Value{}, syntax(t, err)
		}
		bs := make([][]byte, len(raws))
		for i, x := range raws {
			b, err := refDecodeBlob(x)
			if err != nil {
				return abi.Value{}, err
			}
			bs[i] = b
		}
		return abi.BS(bs...), nil
	}
	return abi.Value{}, &DecodeError{Kind: UnknownType, Type: t}
}

func refDecodeBlob(r json.RawMessage) ([]byte, error) {
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		return nil, syntax("B", err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, syntax("B", fmt.Errorf("not valid base64: %w", err))
	}
	return b, nil
}
