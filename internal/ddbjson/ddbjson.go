// Package ddbjson is the one DynamoDB JSON codec of the project: {"S":"x"},
// {"N":"12.5"}, {"M":{...}} and so on, as the AWS JSON 1.0 protocol, stream
// records and captured Lambda events carry attribute values. The host's
// decoder, its commands and fixtures, and ddblocal's wire format all use it;
// each turns a *DecodeError into its own errors (ddblocal into DynamoDB's
// SerializationException and ValidationException). Its walkers (Object,
// Array, String) read the plain JSON around DynamoDB JSON in the same one
// pass: a Lambda event's envelope, the change record in a Kinesis record.
package ddbjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dynafold/dynafold/abi"
)

// ErrBadAttributeValue is matched by every decoding error: a value in
// DynamoDB JSON that is not one of DynamoDB's types.
var ErrBadAttributeValue = errors.New("bad DynamoDB JSON attribute value")

// ErrorKind is what is wrong with a value, for callers that answer each
// kind in their own way.
type ErrorKind int

// The kinds of decoding error.
const (
	Syntax        ErrorKind = iota + 1 // not JSON of the descriptor's shape
	Empty                              // {} or null: no type descriptor
	MultipleTypes                      // more than one type descriptor
	UnknownType                        // a descriptor that is no DynamoDB type
	NullFalse                          // {"NULL": false}
	TooLarge                           // over Limits.MaxItemSize or MaxValueSize
	TooDeep                            // nested deeper than Limits.MaxDepth
)

// DecodeError is a value that does not decode. It matches
// ErrBadAttributeValue.
type DecodeError struct {
	Kind ErrorKind
	Type string // the type descriptor, where there is one
	Err  error  // the JSON error behind a Syntax error
	Attr string // the attribute whose value is wrong (a member of an item; TooLarge and TooDeep always)
}

// Error implements error.
func (e *DecodeError) Error() string {
	switch e.Kind {
	case Syntax:
		if e.Type == "" {
			return e.Err.Error()
		}
		return fmt.Sprintf("%s %s: %v", e.Type, shape(e.Type), e.Err)
	case Empty:
		return "an attribute value has no type descriptor"
	case MultipleTypes:
		return "an attribute value has more than one type descriptor"
	case UnknownType:
		return fmt.Sprintf("unknown type descriptor %q", e.Type)
	case NullFalse:
		return "NULL must be true"
	case TooLarge:
		return fmt.Sprintf("the item is over its size limit (attribute %q)", e.Attr)
	case TooDeep:
		return fmt.Sprintf("the item is nested over its depth limit (attribute %q)", e.Attr)
	}
	return "bad attribute value"
}

// Is matches ErrBadAttributeValue.
func (e *DecodeError) Is(target error) bool { return target == ErrBadAttributeValue }

// Unwrap returns the JSON error behind a Syntax error.
func (e *DecodeError) Unwrap() error { return e.Err }

func shape(t string) string {
	switch t {
	case "S", "N":
		return "must be a string"
	case "BOOL", "NULL":
		return "must be a boolean"
	case "B":
		return "must be a base64 string"
	case "L", "BS":
		return "must be a list"
	case "SS", "NS":
		return "must be a list of strings"
	case "M":
		return "must be an object"
	}
	return "is malformed"
}

func syntax(t string, err error) error { return &DecodeError{Kind: Syntax, Type: t, Err: err} }

// DecodeValue decodes one attribute value. Numbers stay text, binaries are
// base64; an empty value, several type descriptors, an unknown one and
// {"NULL": false} are errors, as DynamoDB has them.
func DecodeValue(b []byte) (abi.Value, error) { return DecodeValueLimits(b, Limits{}) }

// DecodeItem decodes a JSON object of attribute values (null: an empty,
// non-nil item).
func DecodeItem(b []byte) (abi.Item, error) { return DecodeItemLimits(b, Limits{}) }

// ValueFromJSON decodes one attribute value (DecodeValue).
func ValueFromJSON(raw json.RawMessage) (abi.Value, error) { return DecodeValue(raw) }

// ItemFromJSON decodes an item; empty input or JSON null decodes to a nil
// item.
func ItemFromJSON(raw json.RawMessage) (abi.Item, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	return DecodeItem(raw)
}

// ValueToJSON encodes a value as DynamoDB JSON.
func ValueToJSON(v abi.Value) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := AppendValue(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ItemToJSON encodes an item as DynamoDB JSON, attributes sorted (nil: null).
func ItemToJSON(it abi.Item) (json.RawMessage, error) {
	if it == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := AppendItem(&buf, it); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// AppendItem writes an item as a JSON object of DynamoDB JSON values,
// attributes sorted (nil: {}).
func AppendItem(buf *bytes.Buffer, it abi.Item) error { return AppendObject(buf, it, AppendValue) }

// AppendObject writes an item as a JSON object, attributes sorted, each
// value written by value (AppendValue for DynamoDB JSON; another encoder
// for another JSON form of the same item).
func AppendObject(buf *bytes.Buffer, it abi.Item, value func(*bytes.Buffer, abi.Value) error) error {
	var arr [16]string
	keys := arr[:0]
	for k := range it {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		AppendString(buf, k)
		buf.WriteByte(':')
		if err := value(buf, it[k]); err != nil {
			return fmt.Errorf("attribute %q: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return nil
}

// AppendValue writes a value as DynamoDB JSON; a value of no DynamoDB type
// is an error.
func AppendValue(buf *bytes.Buffer, v abi.Value) error {
	switch v.Kind {
	case abi.KindS:
		buf.WriteString(`{"S":`)
		AppendString(buf, v.Str)
	case abi.KindN:
		buf.WriteString(`{"N":`)
		AppendString(buf, v.Str)
	case abi.KindB:
		buf.WriteString(`{"B":"`)
		appendBase64(buf, v.Bytes)
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
		if err := AppendItem(buf, v.Map); err != nil {
			return err
		}
	case abi.KindL:
		buf.WriteString(`{"L":[`)
		for i, e := range v.List {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := AppendValue(buf, e); err != nil {
				return fmt.Errorf("list element %d: %w", i, err)
			}
		}
		buf.WriteByte(']')
	case abi.KindSS, abi.KindNS:
		buf.WriteString(`{"` + v.Kind.String() + `":[`)
		for i, s := range v.Strs {
			if i > 0 {
				buf.WriteByte(',')
			}
			AppendString(buf, s)
		}
		buf.WriteByte(']')
	case abi.KindBS:
		buf.WriteString(`{"BS":[`)
		for i, b := range v.Blobs {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteByte('"')
			appendBase64(buf, b)
			buf.WriteByte('"')
		}
		buf.WriteByte(']')
	default:
		return fmt.Errorf("%w: kind %d has no JSON form", ErrBadAttributeValue, v.Kind)
	}
	buf.WriteByte('}')
	return nil
}

// AppendString writes s as a JSON string, escaped as encoding/json
// escapes it. A string with nothing to escape (the common case) is copied
// as it is, allocating nothing.
func AppendString(buf *bytes.Buffer, s string) {
	high := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&':
			b, _ := json.Marshal(s) // never fails for a string
			buf.Write(b)
			return
		case c >= 0x80:
			high = true
		}
	}
	if high && (!utf8.ValidString(s) || strings.Contains(s, "\u2028") || strings.Contains(s, "\u2029")) {
		b, _ := json.Marshal(s)
		buf.Write(b)
		return
	}
	buf.WriteByte('"')
	buf.WriteString(s)
	buf.WriteByte('"')
}

// appendBase64 writes b in standard base64, allocating nothing.
func appendBase64(buf *bytes.Buffer, b []byte) {
	n := base64.StdEncoding.EncodedLen(len(b))
	buf.Grow(n)
	buf.Write(base64.StdEncoding.AppendEncode(buf.AvailableBuffer(), b))
}
