package ddbjson

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestY8_DecodeItemAtAsDecodeItemLimits: an object decoded where it sits
// in a larger JSON body (DecodeItemAt) is the item DecodeItemLimits
// decodes from the object alone, with the position just past it, and it
// fails exactly when DecodeItemLimits does: for every seed of the decoder's
// tests and hundreds of random items, under DynamoDB's limits and under
// tight ones.
func TestY8_DecodeItemAtAsDecodeItemLimits(t *testing.T) {
	var objects [][]byte
	for _, s := range decodeSeeds {
		if b := []byte(s); json.Valid(b) && len(s) > 0 && s[0] == '{' {
			objects = append(objects, b)
		}
	}
	for _, it := range randomItems(11, 400) {
		b, err := ItemToJSON(it)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, b)
	}
	limits := []Limits{{MaxItemSize: 400 << 10, MaxDepth: 32, StrictBase64: true}, {MaxItemSize: 40, MaxDepth: 3}, {}}
	fails := 0
	for _, obj := range objects {
		body := append(append([]byte(`{"A":[1,{"x":"}"}], "Item" :`), obj...), `,"Z":{"S":"y"}}`...)
		at := len(`{"A":[1,{"x":"}"}], "Item" :`)
		for _, lim := range limits {
			want, werr := DecodeItemLimits(obj, lim)
			got, end, err := DecodeItemAt(body, at, lim)
			if (err == nil) != (werr == nil) {
				t.Fatalf("%s under %+v: DecodeItemAt error %v, DecodeItemLimits %v", obj, lim, err, werr)
			}
			if err != nil {
				fails++
				continue
			}
			if end != at+len(obj) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s under %+v: DecodeItemAt %#v ending at %d, DecodeItemLimits %#v (the object ends at %d)", obj, lim, got, end, want, at+len(obj))
			}
		}
	}
	if fails == 0 || fails == len(objects)*len(limits) {
		t.Fatalf("%d of %d decodes failed: the test compares only one outcome", fails, len(objects)*len(limits))
	}
}
