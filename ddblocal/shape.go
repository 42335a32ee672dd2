package ddblocal

import (
	"bytes"
	"context"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// maxPlainMembers bounds the list elements and map members a request may
// hold outside its attribute values (table names, key schemas, index
// definitions, TransactItems, AttributesToGet, ExpressionAttributeNames,
// and so on). encoding/json turns each into a struct or map entry, and an
// empty JSON object of 2 bytes can become a struct of hundreds, so
// without a count a small body could cost a hundred times its size.
// DynamoDB's own limits on these lists are far lower (100 TransactItems,
// 100 keys in a BatchGetItem, 25 writes in a BatchWriteItem).
const maxPlainMembers = 10_000

// plainMemberBytes bounds what decoding one such member costs (its
// struct, slice growth included); FuzzDecodeRequest checks it.
const plainMemberBytes = 640

// The request fields that hold attribute values, decoded by wire within
// DynamoDB's item limits, and the legacy ones kept as raw JSON.
var (
	avFields     = [][]byte{[]byte("Item"), []byte("Key"), []byte("ExpressionAttributeValues"), []byte("ExclusiveStartKey")}
	avListFields = [][]byte{[]byte("Keys")}
	rawFields    = [][]byte{[]byte("Expected"), []byte("ConditionalOperator"), []byte("AttributeUpdates"),
		[]byte("KeyConditions"), []byte("QueryFilter"), []byte("ScanFilter")}
)

// checkShape counts the list elements and map members of a request body
// (valid JSON) outside its attribute values, and refuses one with more
// than maxPlainMembers before any of it is decoded. It stops if ctx ends.
// encoding/json matches field names regardless of case, and so does it.
func checkShape(ctx context.Context, body []byte) error {
	w := shapeWalker{b: body, ctx: ctx, check: ctxCheckEvery}
	return w.value(false)
}

// ctxCheckEvery is how many bytes the walk goes between looks at ctx.
const ctxCheckEvery = 1 << 20

type shapeWalker struct {
	b       []byte
	pos     int
	members int
	ctx     context.Context
	check   int
}

func (w *shapeWalker) ws() {
	for w.pos < len(w.b) {
		switch w.b[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

func (w *shapeWalker) count() error {
	w.members++
	if w.members > maxPlainMembers {
		return apierr.Validation("ddblocal refuses a request with more than %d list elements and map members outside its attribute values (DynamoDB's limits on its lists are far lower); send fewer", maxPlainMembers)
	}
	if w.pos >= w.check {
		w.check = w.pos + ctxCheckEvery
		return clientGone(w.ctx)
	}
	return nil
}

// value walks one JSON value; avList tells that it is the list of a
// Keys field, whose elements are items.
func (w *shapeWalker) value(avList bool) error {
	w.ws()
	if w.pos >= len(w.b) {
		return nil
	}
	switch w.b[w.pos] {
	case '{':
		w.pos++
		for {
			w.ws()
			if w.pos >= len(w.b) || w.b[w.pos] == '}' {
				w.pos++
				return nil
			}
			if w.b[w.pos] == ',' {
				w.pos++
				continue
			}
			start := w.pos + 1
			w.skipString()
			name := w.b[start:max(start, w.pos-1)]
			w.ws()
			w.pos++ // ':'
			if err := w.count(); err != nil {
				return err
			}
			var err error
			switch {
			case fieldIn(name, avFields) || fieldIn(name, rawFields):
				err = w.skip()
			case fieldIn(name, avListFields):
				err = w.value(true)
			default:
				err = w.value(false)
			}
			if err != nil {
				return err
			}
		}
	case '[':
		w.pos++
		for {
			w.ws()
			if w.pos >= len(w.b) || w.b[w.pos] == ']' {
				w.pos++
				return nil
			}
			if w.b[w.pos] == ',' {
				w.pos++
				continue
			}
			if err := w.count(); err != nil {
				return err
			}
			var err error
			if avList {
				err = w.skip()
			} else {
				err = w.value(false)
			}
			if err != nil {
				return err
			}
		}
	case '"':
		w.skipString()
	default:
		for w.pos < len(w.b) && !isDelim(w.b[w.pos]) {
			w.pos++
		}
	}
	return nil
}

func isDelim(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// skipString passes the string at pos (its opening quote).
func (w *shapeWalker) skipString() {
	for w.pos++; w.pos < len(w.b); w.pos++ {
		switch w.b[w.pos] {
		case '\\':
			w.pos++
		case '"':
			w.pos++
			return
		}
	}
}

// skip passes one JSON value without counting what is in it.
func (w *shapeWalker) skip() error {
	w.ws()
	depth := 0
	for w.pos < len(w.b) {
		switch w.b[w.pos] {
		case '"':
			w.skipString()
			if depth == 0 {
				return nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of the container holding a scalar
				return nil
			}
			depth--
			if depth == 0 {
				w.pos++
				return nil
			}
		case ',':
			if depth == 0 {
				return nil
			}
		}
		w.pos++
		if w.pos >= w.check {
			w.check = w.pos + ctxCheckEvery
			if err := clientGone(w.ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func fieldIn(name []byte, fields [][]byte) bool {
	for _, f := range fields {
		if bytes.EqualFold(name, f) {
			return true
		}
	}
	return false
}
