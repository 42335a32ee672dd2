package ddblocal

import (
	"sync"
	"unicode/utf8"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

// A request's envelope (its top-level object: TableName, Key, Item,
// expressions, flags) is read in one pass by the hot item operations,
// without encoding/json's reflection and its second scan of the body. The
// body reaching decode is valid JSON of the operation's shape (front and
// checkRequest checked it), so the reader only takes what it knows to
// decode exactly as encoding/json would: member names spelled as the
// fields are, strings without escapes, true and false, objects of such
// strings, and attribute values, which go to the same UnmarshalJSON
// methods encoding/json calls, with the same bytes. On anything else (a
// null, an escape, a member it does not know, a name in another case) it
// gives up and decode decodes the body with encoding/json, from the
// start, so the result and the errors are encoding/json's.

// enveloped is a request input read by the envelope reader: member reads
// the value of one member (the reader is at it) into the input; ok false
// gives up.
type enveloped interface {
	member(e *envelope, name string) (ok bool, err error)
}

// envelope reads a JSON object known to be valid.
type envelope struct {
	b   []byte
	pos int
	// What the reader saw, for readChecked: the members read (memberBit),
	// whether one came twice, and the members of ExpressionAttributeNames.
	seen  uint32
	dup   bool
	names int
}

// decodeEnvelope reads body's members into in. ok false: the reader gave
// up (in may be partly set); otherwise err is the first error of a
// member's value, as encoding/json returns it.
func decodeEnvelope(body []byte, in enveloped) (ok bool, err error) {
	e := &envelope{b: body}
	return e.read(in)
}

// read is decodeEnvelope with e.
func (e *envelope) read(in enveloped) (ok bool, err error) {
	e.ws()
	if ok, err := e.object(in); !ok || err != nil {
		return ok, err
	}
	return e.rest(), nil
}

// object reads the object at pos, whose members in reads, and steps over
// it.
func (e *envelope) object(in enveloped) (ok bool, err error) {
	if e.peek() != '{' {
		return false, nil
	}
	e.pos++
	e.ws()
	if e.peek() == '}' {
		e.pos++
		return true, nil
	}
	for {
		name, bit, ok := e.name()
		if !ok {
			return false, nil
		}
		e.dup = e.dup || e.seen&bit != 0
		e.seen |= bit
		e.ws()
		if e.peek() != ':' {
			return false, nil
		}
		e.pos++
		e.ws()
		ok, err := in.member(e, name)
		if !ok || err != nil {
			return ok, err
		}
		e.ws()
		switch e.peek() {
		case ',':
			e.pos++
			e.ws()
		case '}':
			e.pos++
			return true, nil
		default:
			return false, nil
		}
	}
}

// rest reports whether only whitespace follows the object.
func (e *envelope) rest() bool {
	e.ws()
	return e.pos == len(e.b)
}

func (e *envelope) ws() {
	for e.pos < len(e.b) {
		switch e.b[e.pos] {
		case ' ', '\t', '\n', '\r':
			e.pos++
		default:
			return
		}
	}
}

func (e *envelope) peek() byte {
	if e.pos < len(e.b) {
		return e.b[e.pos]
	}
	return 0
}

// str reads a string without escapes, of valid UTF-8 (so its bytes are
// the string).
func (e *envelope) str() (string, bool) {
	if e.peek() != '"' {
		return "", false
	}
	ascii := true
	for i := e.pos + 1; i < len(e.b); i++ {
		switch c := e.b[i]; {
		case c == '"':
			span := e.b[e.pos+1 : i]
			if !ascii && !utf8.Valid(span) {
				return "", false // encoding/json replaces what is not UTF-8
			}
			e.pos = i + 1
			return string(span), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
	}
	return "", false
}

// The members the reader knows, one bit each (envelope.seen).
const (
	bitTableName uint32 = 1 << iota
	bitKey
	bitItem
	bitConsistentRead
	bitProjectionExpression
	bitConditionExpression
	bitUpdateExpression
	bitReturnValues
	bitReturnValuesOnConditionCheckFailure
	bitExpressionAttributeNames
	bitExpressionAttributeValues
	bitReturnConsumedCapacity
	bitTransactItems
	bitClientRequestToken
	bitPut
	bitDelete
	bitUpdate
	bitConditionCheck
	bitIndexName
	bitSelect
	bitLimit
	bitExclusiveStartKey
	bitFilterExpression
	bitKeyConditionExpression
	bitScanIndexForward
	bitRequestItems
	bitKeys
)

// memberName returns the member name the reader knows (those the
// inputs' member methods take) spelled as b, as a constant string (a
// switch: no hashing, no copy), and its bit.
func memberName(b []byte) (string, uint32, bool) {
	switch string(b) {
	case "TableName":
		return "TableName", bitTableName, true
	case "Key":
		return "Key", bitKey, true
	case "Item":
		return "Item", bitItem, true
	case "ConsistentRead":
		return "ConsistentRead", bitConsistentRead, true
	case "ProjectionExpression":
		return "ProjectionExpression", bitProjectionExpression, true
	case "ConditionExpression":
		return "ConditionExpression", bitConditionExpression, true
	case "UpdateExpression":
		return "UpdateExpression", bitUpdateExpression, true
	case "ReturnValues":
		return "ReturnValues", bitReturnValues, true
	case "ReturnValuesOnConditionCheckFailure":
		return "ReturnValuesOnConditionCheckFailure", bitReturnValuesOnConditionCheckFailure, true
	case "ExpressionAttributeNames":
		return "ExpressionAttributeNames", bitExpressionAttributeNames, true
	case "ExpressionAttributeValues":
		return "ExpressionAttributeValues", bitExpressionAttributeValues, true
	case "ReturnConsumedCapacity":
		return "ReturnConsumedCapacity", bitReturnConsumedCapacity, true
	case "TransactItems":
		return "TransactItems", bitTransactItems, true
	case "ClientRequestToken":
		return "ClientRequestToken", bitClientRequestToken, true
	case "Put":
		return "Put", bitPut, true
	case "Delete":
		return "Delete", bitDelete, true
	case "Update":
		return "Update", bitUpdate, true
	case "ConditionCheck":
		return "ConditionCheck", bitConditionCheck, true
	case "IndexName":
		return "IndexName", bitIndexName, true
	case "Select":
		return "Select", bitSelect, true
	case "Limit":
		return "Limit", bitLimit, true
	case "ExclusiveStartKey":
		return "ExclusiveStartKey", bitExclusiveStartKey, true
	case "FilterExpression":
		return "FilterExpression", bitFilterExpression, true
	case "KeyConditionExpression":
		return "KeyConditionExpression", bitKeyConditionExpression, true
	case "ScanIndexForward":
		return "ScanIndexForward", bitScanIndexForward, true
	case "RequestItems":
		return "RequestItems", bitRequestItems, true
	case "Keys":
		return "Keys", bitKeys, true
	}
	return "", 0, false
}

// name reads a member name the reader knows (memberName), without
// copying it; ok false on any other (the reader gives up, as member would).
func (e *envelope) name() (string, uint32, bool) {
	if e.peek() != '"' {
		return "", 0, false
	}
	for i := e.pos + 1; i < len(e.b); i++ {
		switch c := e.b[i]; {
		case c == '"':
			n, bit, ok := memberName(e.b[e.pos+1 : i])
			if ok {
				e.pos = i + 1
			}
			return n, bit, ok
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", 0, false
		}
	}
	return "", 0, false
}

// raw returns the object at pos, as encoding/json hands it to an
// UnmarshalJSON method.
func (e *envelope) raw() ([]byte, bool) {
	if e.peek() != '{' {
		return nil, false
	}
	start, depth := e.pos, 0
	for i := e.pos; i < len(e.b); i++ {
		switch e.b[i] {
		case '"':
			for i++; i < len(e.b) && e.b[i] != '"'; i++ {
				if e.b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				e.pos = i + 1
				return e.b[start:e.pos], true
			}
		}
	}
	return nil, false
}

// setStr reads a string member.
func (e *envelope) setStr(p *string) (bool, error) {
	s, ok := e.str()
	if ok {
		*p = s
	}
	return ok, nil
}

// setStrPtr reads a string member of a *string field.
func (e *envelope) setStrPtr(p **string) (bool, error) {
	s, ok := e.str()
	if ok {
		*p = &s
	}
	return ok, nil
}

// setBool reads true or false.
func (e *envelope) setBool(p *bool) (bool, error) {
	for _, lit := range []string{"true", "false"} {
		if len(e.b)-e.pos >= len(lit) && string(e.b[e.pos:e.pos+len(lit)]) == lit {
			e.pos += len(lit)
			*p = lit == "true"
			return true, nil
		}
	}
	return false, nil
}

// setNames reads an object of strings into a map, as encoding/json does:
// into the map already there, or a new one.
func (e *envelope) setNames(p *map[string]string) (bool, error) {
	if e.peek() != '{' {
		return false, nil
	}
	e.pos++
	if *p == nil {
		*p = map[string]string{}
	}
	e.ws()
	if e.peek() == '}' {
		e.pos++
		return true, nil
	}
	for {
		k, ok := e.str()
		if !ok {
			return false, nil
		}
		e.ws()
		if e.peek() != ':' {
			return false, nil
		}
		e.pos++
		e.ws()
		v, ok := e.str()
		if !ok {
			return false, nil
		}
		(*p)[k] = v
		e.names++
		e.ws()
		switch e.peek() {
		case ',':
			e.pos++
			e.ws()
		case '}':
			e.pos++
			return true, nil
		default:
			return false, nil
		}
	}
}

// setItem reads an item or key as its UnmarshalJSON does: decoded where
// it is (DecodeAt), or, when that finds an error, through UnmarshalJSON
// for the error's words.
func (e *envelope) setItem(p *wire.RequestItem) (bool, error) {
	if e.peek() == '{' {
		if end, ok := p.DecodeAt(e.b, e.pos); ok {
			e.pos = end
			return true, nil
		}
	}
	b, ok := e.raw()
	if !ok {
		return false, nil
	}
	return true, p.UnmarshalJSON(b)
}

// keyMaps are maps a GetItem's key is read into, used again once the
// item is read (nothing keeps the key).
var keyMaps = sync.Pool{New: func() any { return make(abi.Item, 2) }}

// maxPlainKey is the longest key object setKey reads itself: far below
// the item size limit the decoder checks first, above what two key
// attributes within their own limits (2048 and 1024 bytes) take.
const maxPlainKey = 8 << 10

// setKey reads a key as setItem does, into a map of keyMaps (set in
// *pooled, for putKey) when it is a plain one: at most two members, each
// {"S":…} or {"N":…}, names and strings without escapes (so the decoder
// would give the same item and no error); anything else goes to setItem.
func (e *envelope) setKey(p *wire.RequestItem, pooled *abi.Item) (bool, error) {
	start := e.pos
	m := keyMaps.Get().(abi.Item)
	if e.plainKey(m) && e.pos-start <= maxPlainKey {
		*p, *pooled = wire.ItemOf(m), m
		return true, nil
	}
	clear(m)
	keyMaps.Put(m)
	e.pos = start
	return e.setItem(p)
}

// plainKey reads a plain key (setKey) into m; false at anything else.
func (e *envelope) plainKey(m abi.Item) bool {
	if !e.punct('{') {
		return false
	}
	for {
		name, ok := e.str()
		if !ok || len(m) == 2 {
			return false
		}
		if _, dup := m[name]; dup {
			return false
		}
		if e.ws(); !e.punct(':') || !e.punct('{') {
			return false
		}
		typ, ok := e.str()
		var kind abi.Kind
		switch {
		case !ok:
			return false
		case typ == "S":
			kind = abi.KindS
		case typ == "N":
			kind = abi.KindN
		default:
			return false
		}
		if e.ws(); !e.punct(':') {
			return false
		}
		v, ok := e.str()
		if !ok {
			return false
		}
		if e.ws(); !e.punct('}') {
			return false
		}
		m[name] = abi.Value{Kind: kind, Str: v}
		e.ws()
		switch {
		case e.punct(','):
		case e.peek() == '}': // the key's end: what follows is the caller's
			e.pos++
			return true
		default:
			return false
		}
	}
}

// punct steps over c and the white space after it; false, not moving,
// when the byte at pos is not c.
func (e *envelope) punct(c byte) bool {
	if e.peek() != c {
		return false
	}
	e.pos++
	e.ws()
	return true
}

// putKey gives a key map setKey read back to keyMaps.
func putKey(m abi.Item) {
	if m != nil {
		clear(m)
		keyMaps.Put(m)
	}
}

// setValues reads ExpressionAttributeValues through its UnmarshalJSON.
func (e *envelope) setValues(p *wire.RequestValues) (bool, error) {
	b, ok := e.raw()
	if !ok {
		return false, nil
	}
	return true, p.UnmarshalJSON(b)
}

// exprMember reads the members of exprInput and rccInput.
func (e *envelope) exprMember(ei *exprInput, rc *rccInput, name string) (bool, error) {
	switch name {
	case "ExpressionAttributeNames":
		return e.setNames(&ei.ExpressionAttributeNames)
	case "ExpressionAttributeValues":
		return e.setValues(&ei.ExpressionAttributeValues)
	case "ReturnConsumedCapacity":
		return e.setStr(&rc.ReturnConsumedCapacity)
	}
	return false, nil
}

func (in *getItemInput) member(e *envelope, name string) (bool, error) {
	switch name {
	case "TableName":
		return e.setStr(&in.TableName)
	case "Key":
		return e.setKey(&in.Key, &in.keyMap)
	case "ConsistentRead":
		return e.setBool(&in.ConsistentRead)
	case "ProjectionExpression":
		return e.setStrPtr(&in.ProjectionExpression)
	}
	return e.exprMember(&in.exprInput, &in.rccInput, name)
}

func (in *putItemInput) member(e *envelope, name string) (bool, error) {
	switch name {
	case "TableName":
		return e.setStr(&in.TableName)
	case "Item":
		return e.setItem(&in.Item)
	case "ConditionExpression":
		return e.setStrPtr(&in.ConditionExpression)
	case "ReturnValues":
		return e.setStr(&in.ReturnValues)
	case "ReturnValuesOnConditionCheckFailure":
		return e.setStr(&in.ReturnValuesOnConditionCheckFailure)
	}
	return e.exprMember(&in.exprInput, &in.rccInput, name)
}

func (in *deleteItemInput) member(e *envelope, name string) (bool, error) {
	switch name {
	case "TableName":
		return e.setStr(&in.TableName)
	case "Key":
		return e.setItem(&in.Key)
	case "ConditionExpression":
		return e.setStrPtr(&in.ConditionExpression)
	case "ReturnValues":
		return e.setStr(&in.ReturnValues)
	case "ReturnValuesOnConditionCheckFailure":
		return e.setStr(&in.ReturnValuesOnConditionCheckFailure)
	}
	return e.exprMember(&in.exprInput, &in.rccInput, name)
}

func (in *updateItemInput) member(e *envelope, name string) (bool, error) {
	switch name {
	case "TableName":
		return e.setStr(&in.TableName)
	case "Key":
		return e.setItem(&in.Key)
	case "UpdateExpression":
		return e.setStrPtr(&in.UpdateExpression)
	case "ConditionExpression":
		return e.setStrPtr(&in.ConditionExpression)
	case "ReturnValues":
		return e.setStr(&in.ReturnValues)
	case "ReturnValuesOnConditionCheckFailure":
		return e.setStr(&in.ReturnValuesOnConditionCheckFailure)
	}
	return e.exprMember(&in.exprInput, &in.rccInput, name)
}
