package expr

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// testValues are the :values every test expression may use.
func testValues() map[string]abi.Value {
	return map[string]abi.Value{
		":n1": abi.N("1"), ":n2": abi.N("2"), ":n5": abi.N("5"), ":n10": abi.N("10"),
		":s": abi.S("hello"), ":sa": abi.S("a"), ":sb": abi.S("b"), ":he": abi.S("he"),
		":b": abi.B([]byte("hi")), ":t": abi.Bool(true), ":null": abi.Null(),
		":l": abi.L(abi.N("1"), abi.S("x")), ":m": abi.M(map[string]abi.Value{"k": abi.S("v")}),
		":ss": abi.SS("a", "b"), ":ns": abi.NS("1", "2"), ":bs": abi.BS([]byte("x")),
		":typeS": abi.S("S"), ":typeN": abi.S("N"), ":typeBad": abi.S("X"), ":empty": abi.L(),
	}
}

func testNames() map[string]string {
	return map[string]string{"#s": "status", "#a": "a", "#m": "m", "#dot": "x.y"}
}

func testParams() *Params { return NewParams(testNames(), testValues()) }

// testItem is the item conditions are evaluated against.
func testItem() abi.Item {
	return abi.Item{
		"a":      abi.N("5"),
		"s":      abi.S("hello"),
		"u":      abi.S("é𝄞"),
		"b":      abi.B([]byte("hi there")),
		"t":      abi.Bool(true),
		"z":      abi.Null(),
		"status": abi.S("ok"),
		"x.y":    abi.S("dotted"),
		"l":      abi.L(abi.N("1"), abi.S("x"), abi.M(map[string]abi.Value{"c": abi.N("3")})),
		"m":      abi.M(map[string]abi.Value{"k": abi.S("v"), "n": abi.M(map[string]abi.Value{"d": abi.N("4")})}),
		"ss":     abi.SS("a", "b", "c"),
		"ns":     abi.NS("1", "2.0", "3"),
		"bs":     abi.BS([]byte("x"), []byte("y")),
		"big":    abi.N("12345678901234567890123456789012345678"),
	}
}

// wantValidation asserts err is a ValidationException whose message is want
// (or starts with want when it ends with "...").
func wantValidation(t *testing.T, err error, want string) {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v, want ValidationException %q", err, want)
	}
	if ae.Code != "ValidationException" || ae.Status != 400 {
		t.Fatalf("code/status = %s/%d, want ValidationException/400", ae.Code, ae.Status)
	}
	if p, ok := strings.CutSuffix(want, "..."); ok {
		if !strings.HasPrefix(ae.Message, p) {
			t.Fatalf("message = %q, want prefix %q", ae.Message, p)
		}
		return
	}
	if ae.Message != want {
		t.Fatalf("message = %q, want %q", ae.Message, want)
	}
}

// any2 maps :value names to number texts.
type any2 map[string]string

// values returns the map as number values.
func (m any2) values() map[string]abi.Value {
	out := map[string]abi.Value{}
	for k, v := range m {
		out[k] = abi.N(v)
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
