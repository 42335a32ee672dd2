package ddbjson

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestK1_WalkersReadJSONAsEncodingJSONDoes: Object, Array and String hand
// over what encoding/json reads from the same input, without copying, and
// refuse what it refuses with its message.
func TestK1_WalkersReadJSONAsEncodingJSONDoes(t *testing.T) {
	objects := []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":null}], "d":"x\"y", "e\u00e9": true, "f": {"S": "é"} } `,
		`{"data":"eyJhIjoxfQ==","kinesis":{"sequenceNumber":"4965","data":"e30="}}`,
	}
	for _, in := range objects {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		err := Object([]byte(in), func(k, v []byte) error { got[string(k)] = string(v); return nil })
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d members, want %d", in, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != string(v) {
				t.Errorf("%s: member %q = %s, want %s", in, k, got[k], v)
			}
		}
	}
	var elems []string
	if err := Array([]byte(` [1, "a", {"b": [2]}, null] `), func(v []byte) error { elems = append(elems, string(v)); return nil }); err != nil || len(elems) != 4 || elems[2] != `{"b": [2]}` {
		t.Errorf("Array: %q %v", elems, err)
	}
	for _, in := range []string{`"plain"`, `"a\"b\\c\/d\u00e9\n"`, `"\ud83d\ude00"`, "\"\xff\""} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if got, err := String([]byte(in)); err != nil || got != want {
			t.Errorf("String(%s) = %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{``, `[]`, `{"a"}`, `{"a":1,}`, `{"a":1} x`, `{"a":tru}`, `{"a":"\x01"}`, `OrderPlaced o-1`} {
		var v map[string]json.RawMessage
		want := json.Unmarshal([]byte(in), &v)
		err := Object([]byte(in), func(k, v []byte) error { return nil })
		if in == `[]` { // valid JSON of another kind
			if !errors.Is(err, ErrShape) {
				t.Errorf("Object(%s) = %v, want ErrShape", in, err)
			}
			continue
		}
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("Object(%q) = %v, want %v", in, err, want)
		}
	}
	if _, err := String([]byte(`1`)); !errors.Is(err, ErrShape) {
		t.Errorf("String(1) = %v, want ErrShape", err)
	}
	if err := Array([]byte(`{}`), func([]byte) error { return nil }); !errors.Is(err, ErrShape) {
		t.Errorf("Array({}) = %v, want ErrShape", err)
	}

	// Stop ends the walk at once: what follows is not read.
	n := 0
	if err := Object([]byte(`{"a":1,"b":2, broken`), func(k, v []byte) error { n++; return Stop }); err != nil || n != 1 {
		t.Errorf("Stop: %d members, %v", n, err)
	}
	boom := errors.New("boom")
	if err := Array([]byte(`[1,2]`), func(v []byte) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a callback's error: %v", err)
	}
}
