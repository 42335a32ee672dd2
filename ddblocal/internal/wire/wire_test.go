package wire

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

func TestWire_RoundTripEveryType(t *testing.T) {
	it := abi.Item{
		"s":    abi.S("héllo \"q\""),
		"n":    abi.N("12345678901234567890123456789012345678"),
		"b":    abi.B([]byte{0, 1, 2, 255}),
		"t":    abi.Bool(true),
		"f":    abi.Bool(false),
		"null": abi.Null(),
		"m":    abi.M(abi.Item{"x": abi.N("-0.5"), "e": abi.M(nil)}),
		"l":    abi.L(abi.S("a"), abi.L(), abi.N("1")),
		"ss":   abi.SS("a", "b"),
		"ns":   abi.NS("1", "2.5"),
		"bs":   abi.BS([]byte("x"), []byte{}),
	}
	b, err := json.Marshal(Item(it))
	if err != nil {
		t.Fatal(err)
	}
	var back Item
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !abi.ItemsEqual(it, abi.Item(back)) {
		t.Fatalf("round trip changed the item:\n%s", b)
	}
}

func TestWire_BadValuesAreValidationErrors(t *testing.T) {
	cases := map[string]string{
		`{"a":{}}`:                   "ValidationException",
		`{"a":{"S":"x","N":"1"}}`:    "ValidationException",
		`{"a":{"NULL":false}}`:       "ValidationException",
		`{"a":{"S":1}}`:              "SerializationException",
		`{"a":{"B":"not base64!!"}}`: "SerializationException",
		`[1]`:                        "SerializationException",
	}
	for in, code := range cases {
		var it Item
		err := json.Unmarshal([]byte(in), &it)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Code != code {
			t.Errorf("%s: got %v, want %s", in, err, code)
		}
	}
}
