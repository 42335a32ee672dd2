package ddbjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// refJSON is an item's DynamoDB JSON built as encoding/json's values
// (maps sort their keys; []byte is base64): the encoder's reference.
func refJSON(v abi.Value) any {
	switch v.Kind {
	case abi.KindS:
		return map[string]any{"S": v.Str}
	case abi.KindN:
		return map[string]any{"N": v.Str}
	case abi.KindB:
		return map[string]any{"B": v.Bytes}
	case abi.KindBOOL:
		return map[string]any{"BOOL": v.Bool}
	case abi.KindNULL:
		return map[string]any{"NULL": true}
	case abi.KindM:
		return map[string]any{"M": refItem(v.Map)}
	case abi.KindL:
		l := make([]any, len(v.List))
		for i, e := range v.List {
			l[i] = refJSON(e)
		}
		return map[string]any{"L": l}
	case abi.KindSS:
		return map[string]any{"SS": v.Strs}
	case abi.KindNS:
		return map[string]any{"NS": v.Strs}
	case abi.KindBS:
		return map[string]any{"BS": v.Blobs}
	}
	panic("no such kind")
}

func refItem(it abi.Item) map[string]any {
	m := make(map[string]any, len(it))
	for k, v := range it {
		m[k] = refJSON(v)
	}
	return m
}

// TestY8_AppendItemWritesWhatEncodingJSONWrites: random items (escapes,
// non-ASCII and invalid UTF-8 in names and strings, every type, maps of
// up to 24 members either side of the encoder's 16 sorted on its stack)
// come out of AppendItem and AppendValue byte for byte as encoding/json
// writes them, after what the buffer held; a value of no type is an error
// naming where it is.
func TestY8_AppendItemWritesWhatEncodingJSONWrites(t *testing.T) {
	items := randomItems(7, 400)
	items = append(items, abi.Item{"a\u2028": abi.S("x\u2029y"), "<&>": abi.S("bad\xffutf8"), "é": abi.N("1")}, abi.Item{}, nil)
	for i, it := range items {
		var buf bytes.Buffer
		buf.WriteString("prefix")
		if err := AppendItem(&buf, it); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		want, _ := json.Marshal(refItem(it))
		if got := buf.String(); got != "prefix"+string(want) {
			t.Fatalf("item %d:\n got %s\nwant prefix%s", i, got, want)
		}
		v := abi.M(it)
		buf.Reset()
		if err := AppendValue(&buf, v); err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(refJSON(v)); buf.String() != string(want) {
			t.Fatalf("value %d:\n got %s\nwant %s", i, buf.String(), want)
		}
	}
	bad := abi.Item{"a": abi.S("x"), "m": abi.M(abi.Item{"l": abi.L(abi.S("p"), abi.Value{})})}
	err := AppendItem(new(bytes.Buffer), bad)
	if !errors.Is(err, ErrBadAttributeValue) || err.Error() != `attribute "m": attribute "l": list element 1: bad DynamoDB JSON attribute value: kind 0 has no JSON form` {
		t.Fatalf("a value of no type: %v", err)
	}
}
