package dynamo

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// The hot calls on the wire path (DB.wire): each encodes its request from
// abi values, sends it with ddbclient.Wire, and decodes the answer's items
// straight into abi items.

// call encodes a request with build, sends it and decodes the answer.
func (d *DB) call(ctx context.Context, op string, build func(e *enc) error, decode func(answer []byte) error) error {
	buf := ddbclient.Buffer()
	e := &enc{b: buf}
	if err := build(e); err != nil {
		ddbclient.PutBuffer(buf)
		return encodeError{err}
	}
	if e.err != nil { // what the encoder met after build's own checks
		ddbclient.PutBuffer(buf)
		return encodeError{fmt.Errorf("dynamo %s: %w", op, e.err)}
	}
	if decode == nil {
		decode = func([]byte) error { return nil }
	}
	return d.wire.CallBuffer(ctx, op, buf, decode) // it takes buf
}

// encodeError is a request that could not be encoded: never sent.
type encodeError struct{ err error }

func (e encodeError) Error() string { return e.err.Error() }
func (e encodeError) Unwrap() error { return e.err }

// finish maps a call's error: an encoding error as it is, the rest as
// mapError maps the SDK's.
func finish(op string, err error) error {
	if ee, ok := err.(encodeError); ok {
		return ee.err
	}
	return mapError(op, err)
}

// member calls fn with the answer's top-level member name, read in
// place (see ddbjson.Answer: one pass, the items sharing one copy of the
// answer; a null member is left out).
func member(answer []byte, name string, fn func(v *ddbjson.Node) error) error {
	return ddbjson.Answer(answer, func(k []byte, v *ddbjson.Node) error {
		if string(k) == name && !v.IsNull() {
			return fn(v)
		}
		return nil
	})
}

// in calls fn with the member name of the object v, as member does.
func in(v *ddbjson.Node, name string, fn func(v *ddbjson.Node) error) error {
	return v.Object(func(k []byte, v *ddbjson.Node) error {
		if string(k) == name && !v.IsNull() {
			return fn(v)
		}
		return nil
	})
}

func (d *DB) wireGetItem(ctx context.Context, table string, key abi.Item) (abi.Item, error) {
	var item abi.Item
	err := d.call(ctx, "GetItem", func(e *enc) error {
		e.open()
		e.str("TableName", table)
		e.item("Key", key)
		e.boolean("ConsistentRead", true)
		e.close()
		if e.err != nil {
			return fmt.Errorf("dynamo GetItem key: %w", e.err)
		}
		return nil
	}, func(answer []byte) (err error) {
		return member(answer, "Item", func(v *ddbjson.Node) error {
			item, err = v.Item()
			return err
		})
	})
	if err != nil {
		return nil, finish("GetItem on "+table, err)
	}
	return item, nil
}

func (d *DB) wirePutItem(ctx context.Context, p store.Put) error {
	err := d.call(ctx, "PutItem", func(e *enc) error {
		e.put(p)
		return nil
	}, nil)
	if err != nil { // the operation's name made only for an error
		return finish("PutItem on "+p.Table, err)
	}
	return nil
}

func (d *DB) wireUpdateItem(ctx context.Context, u store.Update) (abi.Item, error) {
	var item abi.Item
	err := d.call(ctx, "UpdateItem", func(e *enc) error {
		e.update(u, true)
		return nil
	}, func(answer []byte) (err error) {
		return member(answer, "Attributes", func(v *ddbjson.Node) error {
			item, err = v.Item()
			return err
		})
	})
	if err != nil {
		return nil, finish("UpdateItem on "+u.Table, err)
	}
	return item, nil
}

func (d *DB) wireDeleteItem(ctx context.Context, del store.Delete) error {
	err := d.call(ctx, "DeleteItem", func(e *enc) error {
		e.delete(del)
		return nil
	}, nil)
	if err != nil {
		return finish("DeleteItem on "+del.Table, err)
	}
	return nil
}

func (d *DB) wireTransactWriteItems(ctx context.Context, writes []store.Write) error {
	token, err := d.tokens.GetIdempotencyToken()
	if err != nil {
		return fmt.Errorf("dynamo TransactWriteItems: client request token: %w", err)
	}
	err = d.call(ctx, "TransactWriteItems", func(e *enc) error {
		e.open()
		// As the SDK fills it in: the retries of this call send the same
		// body, so a retry of a transaction that was applied but whose
		// answer was lost succeeds without applying it again.
		e.str("ClientRequestToken", token)
		e.key("TransactItems")
		e.b.WriteByte('[')
		for i, w := range writes {
			if i > 0 {
				e.b.WriteByte(',')
			}
			if err := e.write(w); err != nil {
				return fmt.Errorf("dynamo TransactWriteItems item %d: %w", i, err)
			}
			if e.err != nil {
				return fmt.Errorf("dynamo TransactWriteItems item %d: %w", i, e.err)
			}
		}
		e.b.WriteByte(']')
		e.close()
		return nil
	}, nil)
	return finish("TransactWriteItems", err)
}

func (d *DB) wireQuery(ctx context.Context, q store.Query) (store.Page, error) {
	var page store.Page
	err := d.call(ctx, "Query", func(e *enc) error {
		e.open()
		e.str("TableName", q.Table)
		e.str("KeyConditionExpression", q.KeyCond)
		e.expr(q.Names, q.Values, nil)
		if e.err != nil {
			return fmt.Errorf("dynamo Query values: %w", e.err)
		}
		if len(q.StartKey) > 0 {
			e.item("ExclusiveStartKey", q.StartKey)
			if e.err != nil {
				return fmt.Errorf("dynamo Query start key: %w", e.err)
			}
		}
		e.boolean("ScanIndexForward", !q.Backwards)
		if q.Index != "" {
			e.str("IndexName", q.Index)
		} else {
			e.boolean("ConsistentRead", true)
		}
		if q.Filter != "" {
			e.str("FilterExpression", q.Filter)
		}
		if q.Limit > 0 {
			e.key("Limit")
			e.b.WriteString(strconv.Itoa(int(q.Limit)))
		}
		e.close()
		return nil
	}, func(answer []byte) error {
		return ddbjson.Answer(answer, func(k []byte, v *ddbjson.Node) (err error) {
			if v.IsNull() {
				return nil
			}
			switch string(k) {
			case "Items":
				if page.Items, err = v.Items(page.Items); err != nil {
					return fmt.Errorf("dynamo Query: %w", err)
				}
			case "LastEvaluatedKey":
				it, err := v.Item()
				if err != nil {
					return fmt.Errorf("dynamo Query last key: %w", err)
				}
				if len(it) > 0 {
					page.LastKey = it
				}
			}
			return nil
		})
	})
	if err != nil {
		return store.Page{}, finish("Query on "+q.Table, err)
	}
	if page.Items == nil {
		page.Items = []abi.Item{}
	}
	return page, nil
}

// wireBatchGet sends one BatchGetItem round of keys of table: the items
// read and the keys left unprocessed. names, when set, are the keys'
// attribute names, sorted (see appendKey).
func (d *DB) wireBatchGet(ctx context.Context, table string, keys []abi.Item, names []string) (items, unprocessed []abi.Item, err error) {
	err = d.call(ctx, "BatchGetItem", func(e *enc) error {
		e.open()
		e.key("RequestItems")
		e.open()
		e.key(table) // table names are [a-zA-Z0-9_.-]: no escaping
		e.open()
		e.boolean("ConsistentRead", true)
		e.key("Keys")
		e.b.WriteByte('[')
		for i, k := range keys {
			if i > 0 {
				e.b.WriteByte(',')
			}
			if err := appendKey(e.b, k, names); err != nil {
				return fmt.Errorf("dynamo BatchGetItem key: %w: %w", ddbclient.ErrInvalidValue, err)
			}
		}
		e.b.WriteByte(']')
		e.close()
		e.close()
		e.close()
		return nil
	}, func(answer []byte) error {
		return ddbjson.Answer(answer, func(k []byte, v *ddbjson.Node) (err error) {
			if v.IsNull() {
				return nil
			}
			switch string(k) {
			case "Responses":
				return in(v, table, func(v *ddbjson.Node) (err error) {
					items, err = v.Items(items)
					return err
				})
			case "UnprocessedKeys":
				return in(v, table, func(v *ddbjson.Node) error {
					return in(v, "Keys", func(v *ddbjson.Node) (err error) {
						unprocessed, err = v.Items(unprocessed)
						return err
					})
				})
			}
			return nil
		})
	})
	if err != nil {
		return nil, nil, finish("BatchGetItem on "+table, err)
	}
	return items, unprocessed, nil
}

// appendKey writes key k as ddbjson.AppendItem writes it, its attributes
// taken in the order of names (sorted, as AppendItem sorts them) when k
// has exactly those: no walk of k's map, no sort. A key of S and N parts
// whose texts need no escaping (the usual one) is appended in one piece.
func appendKey(buf *bytes.Buffer, k abi.Item, names []string) error {
	if len(k) != len(names) {
		return ddbjson.AppendItem(buf, k)
	}
	b := append(buf.AvailableBuffer(), '{')
	for i, n := range names {
		v, ok := k[n]
		if !ok {
			return ddbjson.AppendItem(buf, k) // other names: as AppendItem writes them
		}
		if (v.Kind != abi.KindS && v.Kind != abi.KindN) || !plainJSON(n) || !plainJSON(v.Str) {
			return appendKeyBuffered(buf, k, names)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, n...)
		if v.Kind == abi.KindS {
			b = append(b, `":{"S":"`...)
		} else {
			b = append(b, `":{"N":"`...)
		}
		b = append(b, v.Str...)
		b = append(b, `"}`...)
	}
	b = append(b, '}')
	buf.Write(b)
	return nil
}

// appendKeyBuffered is appendKey for a key with a binary part or a text
// to escape: written through ddbjson's writers.
func appendKeyBuffered(b *bytes.Buffer, k abi.Item, names []string) error {
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		ddbjson.AppendString(b, n)
		b.WriteByte(':')
		if err := ddbjson.AppendValue(b, k[n]); err != nil {
			return fmt.Errorf("attribute %q: %w", n, err)
		}
	}
	b.WriteByte('}')
	return nil
}

// plainJSON reports whether ddbjson.AppendString writes s as it is
// between quotes: printable ASCII with no '"', '\\', '<', '>' or '&'.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
