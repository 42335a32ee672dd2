package wire

import (
	"bytes"
	"encoding/json"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// DynamoDB checks a request's attribute values one by one, attributes in
// the order written and, within a value, its type descriptors in the
// order written: an invalid number in the N of {"S": "a", "N": "b"} is
// reported before the value's having two types. The decoder stops at the
// first value of no valid type; firstValueError finds what DynamoDB
// reports instead (the error path only).

// member is one member of a JSON object, in the order written.
type member struct {
	name string
	raw  json.RawMessage
}

// members returns the members of the JSON object raw in order, nil when
// raw is not an object.
func members(raw []byte) []member {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		out = append(out, member{name, v})
	}
	return out
}

func elements(raw []byte) []json.RawMessage {
	var out []json.RawMessage
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}

func isNullRaw(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

var avTypes = map[string]bool{"S": true, "N": true, "B": true, "BOOL": true, "NULL": true, "SS": true, "NS": true, "BS": true, "L": true, "M": true}

// firstValueError returns the attribute and DynamoDB's error for the
// first invalid value of the raw item (a JSON object of attribute
// values), or nil.
func firstValueError(raw []byte) (string, error) {
	for _, m := range members(raw) {
		if err := valueError(m.raw); err != nil {
			return m.name, err
		}
	}
	return "", nil
}

// valueError returns DynamoDB's error for the raw attribute value, or nil.
func valueError(raw []byte) error {
	var typed []member
	for _, m := range members(raw) {
		if avTypes[m.name] && !isNullRaw(m.raw) {
			typed = append(typed, m)
		}
	}
	if len(typed) == 0 {
		return apierr.Validation("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes")
	}
	for _, t := range typed {
		switch t.name {
		case "M":
			for _, m := range members(t.raw) {
				if err := valueError(m.raw); err != nil {
					return err
				}
			}
		case "L":
			for _, e := range elements(t.raw) {
				if err := valueError(e); err != nil {
					return err
				}
			}
		default:
			b := append(append([]byte(`{"`+t.name+`":`), t.raw...), '}')
			v, err := ddbjson.DecodeValue(b)
			if err != nil {
				return apiError(err)
			}
			if err := expr.ValidateValue(v); err != nil {
				return err
			}
		}
	}
	if len(typed) > 1 {
		return apierr.Validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
	}
	return nil
}
