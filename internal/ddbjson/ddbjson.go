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
func AppendItem(buf *bytes.Buffer, it abi.Item) error {
	b, err := appendItem(buf.AvailableBuffer(), it)
	buf.Write(b) // in place when it fit buf's room
	return err
}

// AppendItemBytes appends an item to b as AppendItem writes it (nil: {});
// what it appended before an error is kept.
func AppendItemBytes(b []byte, it abi.Item) ([]byte, error) {
	return appendItem(b, it)
}

// AppendObject writes an item as a JSON object, attributes sorted, each
// value written by value (AppendValue for DynamoDB JSON; another encoder
// for another JSON form of the same item).
func AppendObject(buf *bytes.Buffer, it abi.Item, value func(*bytes.Buffer, abi.Value) error) error {
	return AppendSorted(buf, it, "attribute", value)
}

// AppendSorted writes m as a JSON object, as encoding/json writes a map:
// names sorted, each value written by value. An error of value is wrapped
// with the member's name, called what ("attribute", "table").
func AppendSorted[V any](buf *bytes.Buffer, m map[string]V, what string, value func(*bytes.Buffer, V) error) error {
	var arr [16]string
	keys := arr[:0]
	for k := range m {
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
		if err := value(buf, m[k]); err != nil {
			return fmt.Errorf("%s %q: %w", what, k, err)
		}
	}
	buf.WriteByte('}')
	return nil
}

// AppendValue writes a value as DynamoDB JSON; a value of no DynamoDB type
// is an error.
func AppendValue(buf *bytes.Buffer, v abi.Value) error {
	b, err := appendValue(buf.AvailableBuffer(), &v)
	buf.Write(b)
	return err
}

// smallItem is the most attributes appendItem sorts on its stack.
const smallItem = 16

// appendItem is AppendItem appending to b: what it wrote before an error
// is kept, as AppendObject keeps it.
func appendItem(b []byte, it abi.Item) ([]byte, error) {
	if len(it) > smallItem {
		return appendItemLarge(b, it)
	}
	// the names and values gathered in one walk of the map, the names
	// sorted by an insertion sort of their positions (no look-up by name
	// afterwards)
	var keys [smallItem]string
	var vals [smallItem]*abi.Value
	var store [smallItem]abi.Value
	var order [smallItem]uint8
	n := 0
	for k, v := range it {
		keys[n], store[n] = k, v
		vals[n] = &store[n]
		j := n
		for j > 0 && keys[order[j-1]] > k {
			order[j] = order[j-1]
			j--
		}
		order[j] = uint8(n)
		n++
	}
	b = append(b, '{')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		k := keys[order[i]]
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, vals[order[i]]); err != nil {
			return b, fmt.Errorf("attribute %q: %w", k, err)
		}
	}
	return append(b, '}'), nil
}

// appendItemLarge is appendItem for an item of many attributes.
func appendItemLarge(b []byte, it abi.Item) ([]byte, error) {
	keys := make([]string, 0, len(it))
	for k := range it {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		v := it[k]
		var err error
		if b, err = appendValue(b, &v); err != nil {
			return b, fmt.Errorf("attribute %q: %w", k, err)
		}
	}
	return append(b, '}'), nil
}

// appendValue is AppendValue appending to b.
func appendValue(b []byte, v *abi.Value) ([]byte, error) {
	switch v.Kind {
	case abi.KindS:
		b = append(b, `{"S":`...)
		b = appendString(b, v.Str)
	case abi.KindN:
		b = append(b, `{"N":`...)
		b = appendString(b, v.Str)
	case abi.KindB:
		b = append(b, `{"B":"`...)
		b = base64.StdEncoding.AppendEncode(b, v.Bytes)
		b = append(b, '"')
	case abi.KindBOOL:
		if v.Bool {
			b = append(b, `{"BOOL":true`...)
		} else {
			b = append(b, `{"BOOL":false`...)
		}
	case abi.KindNULL:
		b = append(b, `{"NULL":true`...)
	case abi.KindM:
		b = append(b, `{"M":`...)
		var err error
		if b, err = appendItem(b, v.Map); err != nil {
			return b, err
		}
	case abi.KindL:
		b = append(b, `{"L":[`...)
		for i := range v.List {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, &v.List[i]); err != nil {
				return b, fmt.Errorf("list element %d: %w", i, err)
			}
		}
		b = append(b, ']')
	case abi.KindSS, abi.KindNS:
		if v.Kind == abi.KindSS {
			b = append(b, `{"SS":[`...)
		} else {
			b = append(b, `{"NS":[`...)
		}
		for i, s := range v.Strs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		b = append(b, ']')
	case abi.KindBS:
		b = append(b, `{"BS":[`...)
		for i, x := range v.Blobs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, x)
			b = append(b, '"')
		}
		b = append(b, ']')
	default:
		return b, fmt.Errorf("%w: kind %d has no JSON form", ErrBadAttributeValue, v.Kind)
	}
	return append(b, '}'), nil
}

// AppendString writes s as a JSON string, escaped as encoding/json
// escapes it. A string with nothing to escape (the common case) is copied
// as it is, allocating nothing.
func AppendString(buf *bytes.Buffer, s string) {
	buf.Write(appendString(buf.AvailableBuffer(), s))
}

// jsonPlain marks the bytes a JSON string holds as they are in
// encoding/json's output: printable ASCII but " \ < > &.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString is AppendString appending to b.
func appendString(b []byte, s string) []byte {
	i := 0
	for i < len(s) && jsonPlain[s[i]] {
		i++
	}
	if i < len(s) && !plainHigh(s[i:]) {
		return appendEscaped(b, s, i)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendEscaped is appendString for a string with something to escape
// (its first i bytes plain ASCII), byte for byte as encoding/json writes
// it: \" \\ \b \f \n \r \t, other control bytes and < > & as \u00XX,
// a byte that is not UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and
// \u2029 (without encoding/json's reflection and allocation).
func appendEscaped(b []byte, s string, i int) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainHigh reports whether s (from a byte that is not plain ASCII on)
// is copied as it is by encoding/json: no byte to escape, valid UTF-8,
// neither U+2028 nor U+2029.
func plainHigh(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 && !jsonPlain[c] {
			return false
		}
	}
	return utf8.ValidString(s) && !strings.Contains(s, "\u2028") && !strings.Contains(s, "\u2029")
}
