package reqshape

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Normalize reads body (valid JSON) as DynamoDB's framework reads a
// request of shape s: the first member of the wrong JSON type, in the
// shape's order and attribute values included, is returned as DynamoDB's
// SerializationException ("TRUE_VALUE cannot be converted to String");
// otherwise the body comes back rewritten as DynamoDB reads it: values it
// converts converted ("yes" for a Boolean is true, 1.9 for an Integer 1),
// unknown members and null members dropped. It streams: what it builds
// is the rewritten body, never longer than body.
func Normalize(body []byte, s *Shape) ([]byte, error) {
	n := normalizer{walker: walker{b: body}, out: make([]byte, 0, len(body))}
	n.ws()
	if n.pos >= len(n.b) || n.b[n.pos] != '{' {
		return nil, serialization(msgStart)
	}
	if msg := n.structure(s); msg != "" {
		return nil, serialization(msg)
	}
	return n.out, nil
}

func serialization(msg string) error { return apierr.New("SerializationException", 400, "%s", msg) }

// DynamoDB's words for a value of the wrong JSON type.
const (
	msgStart     = "Start of structure or map found where not expected"
	msgField     = "Unexpected field type"
	msgValue     = "Unexpected value type in payload"
	msgToken     = "Unexpected token received from parser"
	msgParamType = "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and java.lang.Class are in module java.base of loader 'bootstrap')"
	modelPrefix  = "com.amazonaws.dynamodb.v20120810."
)

type normalizer struct {
	walker
	out []byte
}

// token is the JSON kind of the value at pos: '{', '[', '"', 't' (a
// boolean), '0' (a number) or 'n'.
func (n *normalizer) token() byte {
	switch c := n.b[n.pos]; c {
	case '{', '[', '"', 'n':
		return c
	case 't', 'f':
		return 't'
	}
	return '0'
}

// copyValue copies the value at pos to out.
func (n *normalizer) copyValue() {
	start := n.pos
	_ = n.skip()
	n.out = append(n.out, n.b[start:n.pos]...)
}

func (n *normalizer) structure(s *Shape) string {
	var buf [16]member
	ms, _ := n.members(buf[:0])
	end := n.pos
	n.out = append(n.out, '{')
	first := true
	for i := range s.Fields {
		f := &s.Fields[i]
		at := -1
		for _, m := range ms {
			if string(m.name) == f.Name {
				at = m.start
			}
		}
		if at < 0 || n.b[at] == 'n' {
			continue
		}
		if !first {
			n.out = append(n.out, ',')
		}
		first = false
		n.out = strconv.AppendQuote(n.out, f.Name)
		n.out = append(n.out, ':')
		n.pos = at
		if msg := n.value(f.Shape, f.Name == "member"); msg != "" {
			return msg
		}
	}
	n.out = append(n.out, '}')
	n.pos = end
	return ""
}

// value checks and writes the value (not null) at pos, of shape s;
// member tells that it is a member of a list or map.
func (n *normalizer) value(s *Shape, member bool) string {
	t := n.token()
	switch s.Kind {
	case String:
		if t != '"' {
			return n.scalarError("String")
		}
		n.copyValue()
	case Boolean:
		switch t {
		case 't':
			n.copyValue()
		case '"':
			b, ok := boolText(n.str())
			if !ok {
				return msgToken
			}
			n.out = strconv.AppendBool(n.out, b)
		default:
			return n.scalarError("Boolean")
		}
	case Integer, Long:
		name := "Integer"
		if s.Kind == Long {
			name = "Long"
		}
		switch t {
		case '0':
			text := n.number()
			if f, integral := parseNumber(text); !integral {
				n.out = strconv.AppendFloat(n.out, math.Floor(f), 'f', -1, 64)
			} else {
				n.out = append(n.out, text...)
			}
		case 't':
			return boolWord(n.b[n.pos] == 't') + " cannot be converted to " + name
		case '"':
			return "STRING_VALUE cannot be converted to " + name
		case '[':
			return "Unrecognized collection type class java.lang." + name
		default:
			return msgStart
		}
	case List:
		switch t {
		case '[':
			return n.list(s.Elem.Shape)
		case '{':
			return msgStart
		}
		if s.Param {
			return msgParamType
		}
		return msgField
	case Map, AttrMap:
		if t != '{' {
			if t == '[' {
				if s.Param {
					return "Unrecognized collection type java.util.Map<java.lang.String, " + modelPrefix + "AttributeValue>"
				}
				return "Unrecognized collection type java.util.Map<java.lang.String, " + s.Class + ">"
			}
			if s.Param {
				return msgParamType
			}
			return msgField
		}
		elem := attr
		if s.Kind == Map {
			elem = s.Elem.Shape
		}
		return n.mapping(elem)
	case Struct, AttrValue:
		if t != '{' {
			if t == '[' {
				class := s.Class
				if s.Kind == AttrValue {
					class = "AttributeValue"
				}
				return "Unrecognized collection type class " + modelPrefix + class
			}
			if member {
				return msgValue
			}
			return msgField
		}
		if s.Kind == AttrValue {
			return n.attrValue()
		}
		return n.structure(s)
	}
	return ""
}

// scalarError is the message for a value given for a String or Boolean
// that is not one.
func (n *normalizer) scalarError(name string) string {
	switch n.token() {
	case 't':
		return boolWord(n.b[n.pos] == 't') + " cannot be converted to " + name
	case '0':
		if _, integral := parseNumber(n.number()); integral {
			return "NUMBER_VALUE cannot be converted to " + name
		}
		return "DECIMAL_VALUE cannot be converted to " + name
	case '[':
		return "Unrecognized collection type class java.lang." + name
	}
	return msgStart
}

func boolWord(b bool) string {
	if b {
		return "TRUE_VALUE"
	}
	return "FALSE_VALUE"
}

// list writes the list at pos, each member of shape elem (nulls kept).
func (n *normalizer) list(elem *Shape) string {
	n.pos++
	n.out = append(n.out, '[')
	first := true
	for {
		n.ws()
		switch n.b[n.pos] {
		case ']':
			n.pos++
			n.out = append(n.out, ']')
			return ""
		case ',':
			n.pos++
			continue
		}
		if !first {
			n.out = append(n.out, ',')
		}
		first = false
		if n.b[n.pos] == 'n' {
			n.copyValue()
			continue
		}
		if msg := n.value(elem, true); msg != "" {
			return msg
		}
	}
}

// mapping writes the object at pos, each value of shape elem (nulls
// kept).
func (n *normalizer) mapping(elem *Shape) string {
	var buf [16]member
	ms, _ := n.members(buf[:0])
	end := n.pos
	n.out = append(n.out, '{')
	for i, m := range ms {
		if i > 0 {
			n.out = append(n.out, ',')
		}
		n.out, _ = appendJSONString(n.out, m.name)
		n.out = append(n.out, ':')
		n.pos = m.start
		if n.b[n.pos] == 'n' {
			n.copyValue()
			continue
		}
		if msg := n.value(elem, true); msg != "" {
			return msg
		}
	}
	n.out = append(n.out, '}')
	n.pos = end
	return ""
}

// avOrder is the order in which DynamoDB reads an attribute value's
// members.
var avOrder = []string{"S", "B", "N", "BOOL", "NULL", "BS", "NS", "SS", "L", "M"}

var avList = &Shape{Kind: List, Elem: &Field{Name: "member", Shape: attr}}

// attrValue writes the attribute value at pos: its known members
// checked, unknown ones and nulls dropped (DynamoDB then finds the
// value empty).
func (n *normalizer) attrValue() string {
	var buf [4]member
	ms, _ := n.members(buf[:0])
	end := n.pos
	n.out = append(n.out, '{')
	first := true
	for _, t := range avOrder {
		at := -1
		for _, m := range ms {
			if string(m.name) == t {
				at = m.start
			}
		}
		if at < 0 || n.b[at] == 'n' {
			continue
		}
		if !first {
			n.out = append(n.out, ',')
		}
		first = false
		n.out = append(n.out, '"')
		n.out = append(n.out, t...)
		n.out = append(n.out, '"', ':')
		n.pos = at
		var msg string
		switch t {
		case "S", "N":
			msg = n.value(str, false)
		case "B":
			msg = n.blob()
		case "BOOL", "NULL":
			msg = n.value(boolean, false)
		case "SS", "NS", "BS":
			msg = n.set(t == "BS")
		case "L":
			msg = n.value(avList, false)
		case "M":
			msg = n.value(attrMap, false)
		}
		if msg != "" {
			return msg
		}
	}
	n.out = append(n.out, '}')
	n.pos = end
	return ""
}

// set writes a set's members: strings, or base64 strings for a BS.
func (n *normalizer) set(blobs bool) string {
	switch n.token() {
	case '[':
	case '{':
		return msgStart
	default:
		return msgField
	}
	n.pos++
	n.out = append(n.out, '[')
	first := true
	for {
		n.ws()
		switch n.b[n.pos] {
		case ']':
			n.pos++
			n.out = append(n.out, ']')
			return ""
		case ',':
			n.pos++
			continue
		}
		if !first {
			n.out = append(n.out, ',')
		}
		first = false
		if n.b[n.pos] == 'n' {
			n.copyValue()
			continue
		}
		var msg string
		if blobs {
			msg = n.blob()
		} else {
			msg = n.value(str, false)
		}
		if msg != "" {
			return msg
		}
	}
}

// blob checks and writes a value given for binary data: canonical
// base64 in a string.
func (n *normalizer) blob() string {
	switch n.token() {
	case '"':
	case 't', '0':
		return "only base-64-encoded strings are convertible to bytes"
	case '[':
		return "Unrecognized collection type class java.nio.ByteBuffer"
	default:
		return msgStart
	}
	start := n.pos
	s := n.str()
	if len(s)%4 != 0 {
		return "Base64 encoded length is expected a multiple of 4 bytes but found: " + itoa(int64(len(s)))
	}
	dec := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	if _, err := base64.StdEncoding.Strict().Decode(dec, s); err != nil {
		return "Invalid last non-pad Base64 character dectected"
	}
	n.out = append(n.out, n.b[start:n.pos]...)
	return ""
}

// appendJSONString appends s (unescaped bytes) as a JSON string.
func appendJSONString(out, s []byte) ([]byte, error) {
	b, err := json.Marshal(string(s))
	return append(out, b...), err
}
