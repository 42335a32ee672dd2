package ddblocal

import "context"

// The checked read: GetItem and PutItem, the SDKs' hottest calls, read
// their body once after the front's check (ddbjson.ValidText, which also
// found its strings to be text), instead of walking it for its shape
// (reqshape.Walk) and then reading it again with the envelope reader.
// The envelope reader notes what it read (which members, a member twice,
// the names of ExpressionAttributeNames), and the input then tells
// whether reqshape.Walk would have found anything to say: only members of
// the operation's shape that the reader reads, each once, the required
// ones there, a table name of the plain kind, enum members in their set.
// A body where it would (or might), or that the reader gives up on, or
// whose values do not decode, is served from the start by the path that
// checks it in DynamoDB's order (checkRequest, then decode), so every
// error and its order are that path's; the checked read only skips work
// for a body that path accepts. TestY8_CheckedReadAsWalkThenDecode
// compares the two on mutated bodies.

// checkedOp serves an operation from a checked read: ok false when the
// body is to be served by dispatch's checking path instead (nothing was
// done).
type checkedOp func(s *Server, ctx context.Context, body []byte) (out any, ok bool, err error)

// checkedOps are the operations with a checked read.
var checkedOps = map[string]checkedOp{"GetItem": getItemChecked, "PutItem": putItemChecked}

// checkedMax is the largest body the checked read takes: reqshape.Walk
// looks at the request's context once it is a megabyte into a body, a
// body below never.
const checkedMax = 1 << 20

// walkedInput is an input the envelope reader reads in place of
// reqshape.Walk and decode.
type walkedInput interface {
	enveloped
	// walked reports whether reqshape.Walk would find nothing to say of
	// a body the reader read whole into the input (e: what it saw).
	walked(e *envelope) bool
}

// readChecked reads body (valid JSON, its strings text) into in: true when
// the reader read all of it without an error and in.walked agrees, so
// checkRequest would return body as is and decode would read it into in
// as it is now. false: in may be partly set, to be dropped.
func readChecked(body []byte, in walkedInput) bool {
	return readCheckedWith(&envelope{}, body, in)
}

// readCheckedWith is readChecked with the reader e (its caller's: e
// escapes to the inputs' member methods, so a caller that has the input
// on the heap keeps both in one allocation).
func readCheckedWith(e *envelope, body []byte, in walkedInput) bool {
	if len(body) >= checkedMax {
		return false
	}
	*e = envelope{b: body}
	ok, err := e.read(in)
	return ok && err == nil && !e.dup && in.walked(e)
}

// maxWalkedNames bounds the ExpressionAttributeNames of a checked read,
// well inside reqshape.Walk's count (maxPlainMembers, with the request's
// dozen members).
const maxWalkedNames = maxPlainMembers / 2

// walkedMembers reports whether the members e read are only of allowed,
// those of required among them, the table name a plain one (it passes
// every check of the API model), and ReturnConsumedCapacity, when there,
// one of its values.
func walkedMembers(e *envelope, allowed, required uint32, table, rcc string) bool {
	return e.seen&^allowed == 0 && e.seen&required == required && e.names <= maxWalkedNames &&
		plainTableName(table) && (e.seen&bitReturnConsumedCapacity == 0 || oneOf(rcc, "INDEXES", "TOTAL", "NONE"))
}

// plainTableName reports whether name is 3 to 255 of the bytes of
// reqshape.NamePattern (so not an ARN).
func plainTableName(name string) bool {
	if len(name) < 3 || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// walked: GetItem's shape (reqshape.Ops) has no ExpressionAttributeValues,
// which Walk would walk as an unknown member.
func (in *getItemInput) walked(e *envelope) bool {
	const allowed = bitTableName | bitKey | bitConsistentRead | bitProjectionExpression | bitExpressionAttributeNames | bitReturnConsumedCapacity
	return walkedMembers(e, allowed, bitTableName|bitKey, in.TableName, in.ReturnConsumedCapacity)
}

func (in *putItemInput) walked(e *envelope) bool {
	const allowed = bitTableName | bitItem | bitConditionExpression | bitReturnValues | bitReturnValuesOnConditionCheckFailure |
		bitExpressionAttributeNames | bitExpressionAttributeValues | bitReturnConsumedCapacity
	return walkedMembers(e, allowed, bitTableName|bitItem, in.TableName, in.ReturnConsumedCapacity) &&
		(e.seen&bitReturnValues == 0 || oneOf(in.ReturnValues, "ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW")) &&
		(e.seen&bitReturnValuesOnConditionCheckFailure == 0 || oneOf(in.ReturnValuesOnConditionCheckFailure, "ALL_OLD", "NONE"))
}

func getItemChecked(s *Server, ctx context.Context, body []byte) (any, bool, error) {
	r := &struct {
		in getItemInput
		e  envelope
	}{}
	defer func() { putKey(r.in.keyMap) }()
	if !readCheckedWith(&r.e, body, &r.in) {
		return nil, false, nil
	}
	if err := clientGone(ctx); err != nil { // as decode
		return nil, true, err
	}
	out, err := s.getItemRead(&r.in)
	return out, true, err
}

func putItemChecked(s *Server, ctx context.Context, body []byte) (any, bool, error) {
	r := &struct {
		in putItemInput
		e  envelope
	}{}
	if !readCheckedWith(&r.e, body, &r.in) {
		return nil, false, nil
	}
	if err := clientGone(ctx); err != nil { // as decode
		return nil, true, err
	}
	out, err := s.putItemRead(&r.in)
	return out, true, err
}
