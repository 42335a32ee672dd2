package ddbjson

import (
	"errors"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func TestW1_EveryTypeRoundTripsExactly(t *testing.T) {
	it := abi.Item{
		"s": abi.S("é\"x"), "n": abi.N("12345678901234567890123456789012345678"), "b": abi.B([]byte{0, 1, 255}),
		"t": abi.Bool(true), "f": abi.Bool(false), "z": abi.Null(),
		"m": abi.M(abi.Item{"in": abi.L(abi.N("1"), abi.S("2"))}), "ss": abi.SS("a", "b"), "ns": abi.NS("1.50"),
		"bs": abi.BS([]byte("x"), []byte{}),
	}
	b, err := ItemToJSON(it)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ItemFromJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := ItemToJSON(back)
	if string(again) != string(b) {
		t.Fatalf("round trip changed the item:\n%s\n%s", b, again)
	}
	if back["n"].Str != "12345678901234567890123456789012345678" || back["ns"].Strs[0] != "1.50" {
		t.Fatalf("numbers lost their text: %v", back)
	}
}

func TestW1_DecodeErrorsHaveAKind(t *testing.T) {
	for raw, kind := range map[string]ErrorKind{
		`{}`: Empty, `null`: Empty, `{"S":"a","N":"1"}`: MultipleTypes, `{"Q":"x"}`: UnknownType,
		`{"NULL":false}`: NullFalse, `{"S":1}`: Syntax, `{"B":"!!"}`: Syntax, `[`: Syntax, `{"M":{"a":{}}}`: Empty,
	} {
		_, err := DecodeValue([]byte(raw))
		var de *DecodeError
		if !errors.As(err, &de) || de.Kind != kind || !errors.Is(err, ErrBadAttributeValue) {
			t.Errorf("%s: error %v, want kind %d matching ErrBadAttributeValue", raw, err, kind)
		}
	}
	if _, err := ValueToJSON(abi.Value{}); !errors.Is(err, ErrBadAttributeValue) {
		t.Errorf("a value of no type encoded: %v", err)
	}
	if it, err := ItemFromJSON([]byte(" null ")); it != nil || err != nil {
		t.Errorf("null item = %v, %v; want nil", it, err)
	}
}
