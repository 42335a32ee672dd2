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
// pass over what a MarshalJSON returns.
func marshalAnswer(out any) ([]byte, error) {
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
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		ddbjson.AppendString(&buf, k)
		buf.WriteByte(':')
		switch v := m[k].(type) {
		case wire.Item:
			if err := ddbjson.AppendItem(&buf, abi.Item(v)); err != nil {
				return nil, err
			}
		case []wire.Item:
			if v == nil {
				buf.WriteString("null")
				continue
			}
			buf.WriteByte('[')
			for j, it := range v {
				if j > 0 {
					buf.WriteByte(',')
				}
				if err := ddbjson.AppendItem(&buf, abi.Item(it)); err != nil {
					return nil, err
				}
			}
			buf.WriteByte(']')
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			buf.Write(b)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
