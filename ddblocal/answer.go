package ddblocal

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// marshalAnswer is json.Marshal(out), byte for byte, for an operation's
// answer: a map answer's items (wire.Item, []wire.Item) are written
// straight by ddbjson, without encoding/json's reflection and its second
// pass over what a MarshalJSON returns; an itemAnswer as the map it
// stands for. It writes into buf (reset first; a new buffer when nil),
// whose bytes it returns.
func marshalAnswer(buf *bytes.Buffer, out any) ([]byte, error) {
	if a, ok := out.(*itemAnswer); ok {
		return a.marshal(buf)
	}
	m, ok := out.(map[string]any)
	if !ok || m == nil {
		return json.Marshal(out)
	}
	if len(m) == 0 {
		return []byte("{}"), nil
	}
	var arr [8]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := appendMember(buf, k, m[k]); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// appendMember writes "name":value as encoding/json writes a map's
// member.
func appendMember(buf *bytes.Buffer, name string, val any) error {
	ddbjson.AppendString(buf, name)
	buf.WriteByte(':')
	switch v := val.(type) {
	case wire.Item:
		return ddbjson.AppendItem(buf, abi.Item(v))
	case []wire.Item:
		return appendItems(buf, v)
	case map[string][]wire.Item: // BatchGetItem's Responses
		if v == nil {
			buf.WriteString("null")
			return nil
		}
		return ddbjson.AppendSorted(buf, v, "table", appendItems)
	case map[string]any:
		if v != nil && len(v) == 0 { // an empty UnprocessedKeys
			buf.WriteString("{}")
			return nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.Write(b)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

// appendItems writes items as encoding/json writes a []wire.Item.
func appendItems(buf *bytes.Buffer, items []wire.Item) error {
	if items == nil {
		buf.WriteString("null")
		return nil
	}
	buf.WriteByte('[')
	for j, it := range items {
		if j > 0 {
			buf.WriteByte(',')
		}
		if err := ddbjson.AppendItem(buf, abi.Item(it)); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// itemAnswer is GetItem's answer, {"ConsumedCapacity":…,"Item":…} with
// each member only when set: the map[string]any it stands for, written
// without the map, its sorting and the boxing of the item.
type itemAnswer struct {
	item           wire.Item
	cc             any
	hasItem, hasCC bool
	// enc, when set, holds (or is to hold) item's encoding: item is a
	// stored row, whole.
	enc *itemEnc
}

func (a *itemAnswer) marshal(buf *bytes.Buffer) ([]byte, error) {
	if !a.hasItem && !a.hasCC {
		return []byte("{}"), nil
	}
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	buf.WriteByte('{')
	if a.hasCC {
		if err := appendMember(buf, "ConsumedCapacity", a.cc); err != nil {
			return nil, err
		}
	}
	if a.hasItem {
		if a.hasCC {
			buf.WriteByte(',')
		}
		if err := a.appendItem(buf); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// appendItem writes the Item member: the item's encoding kept with it
// when a read before encoded it, else encoded now (and kept).
func (a *itemAnswer) appendItem(buf *bytes.Buffer) error {
	if a.enc == nil {
		return appendMember(buf, "Item", a.item)
	}
	buf.WriteString(`"Item":`)
	if b := a.enc.b.Load(); b != nil {
		buf.Write(*b)
		return nil
	}
	at := buf.Len()
	if err := ddbjson.AppendItem(buf, abi.Item(a.item)); err != nil {
		return err
	}
	if enc := buf.Bytes()[at:]; len(enc) <= maxKeptEncoding {
		b := bytes.Clone(enc)
		a.enc.b.Store(&b)
	}
	return nil
}

// maxKeptEncoding is the largest item encoding kept with its stored item
// (a row's size; a larger item is encoded on every read rather than held
// twice).
const maxKeptEncoding = 4 << 10

// asMap is the map the answer stands for.
func (a *itemAnswer) asMap() map[string]any {
	m := map[string]any{}
	if a.hasItem {
		m["Item"] = a.item
	}
	if a.hasCC {
		m["ConsumedCapacity"] = a.cc
	}
	return m
}
