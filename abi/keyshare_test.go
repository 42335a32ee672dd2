package abi

import (
	"reflect"
	"testing"
)

// TestY8_DecodeKeyResponseSharesRepeatedKeys: a key encoded like the last
// key decoded (nil keys in between do not count) is the same Item; other
// keys, nil keys and errors decode as they were encoded.
func TestY8_DecodeKeyResponseSharesRepeatedKeys(t *testing.T) {
	a := Item{"pk": S("A#1"), "sk": S("A")}
	b := Item{"pk": S("A#2"), "sk": S("A")}
	// a key that starts like a but is longer must not be taken for a
	long := Item{"pk": S("A#1"), "sk": S("A"), "x": N("1")}
	in := &KeyResponse{Keys: []KeyResult{
		{Key: a}, {Key: a}, {Key: b}, {Key: nil}, {Key: b}, {Key: b, Error: &Error{Tag: "T", Message: "m"}},
		{Key: a}, {Key: long}, {Key: a},
	}}
	out, err := DecodeKeyResponse(AppendKeyResponse(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("decoded %+v, want %+v", out, in)
	}
	same := func(i, j int) bool {
		return reflect.ValueOf(out.Keys[i].Key).UnsafePointer() == reflect.ValueOf(out.Keys[j].Key).UnsafePointer()
	}
	if !same(0, 1) || !same(2, 4) || !same(4, 5) {
		t.Error("a key repeated right after itself was decoded again")
	}
	if same(1, 2) || same(0, 6) || same(6, 7) || same(7, 8) {
		t.Error("keys that are not repeated right after each other share an item")
	}
	if out.Keys[7].Key["x"].Str != "1" || len(out.Keys[8].Key) != 2 {
		t.Errorf("a key that starts like the one before it: %v then %v", out.Keys[7].Key, out.Keys[8].Key)
	}
}
