package guest_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

type Inner struct {
	Label string `ddb:"label"`
	Count uint16
}

type Base struct {
	ID string `ddb:"id"`
}

type everything struct {
	Base                             // flattened: "id"
	Name      string                 `ddb:"name"`
	Empty     string                 `ddb:"empty"`
	Amount    guest.Number           `ddb:"amount"`
	I         int                    `ddb:"i"`
	I8        int8                   `ddb:"i8"`
	U64       uint64                 `ddb:"u64"`
	F         float64                `ddb:"f"`
	F32       float32                `ddb:"f32"`
	OK        bool                   `ddb:"ok"`
	Raw       []byte                 `ddb:"raw"`
	Nested    Inner                  `ddb:"nested"`
	Ptr       *Inner                 `ddb:"ptr"`
	NilPtr    *Inner                 `ddb:"nilPtr"`
	Tags      []string               `ddb:"tags"`
	NoTags    []string               `ddb:"noTags"`
	Matrix    [][]int64              `ddb:"matrix"`
	Scores    map[string]float64     `ddb:"scores"`
	Children  []Inner                `ddb:"children"`
	Any       any                    `ddb:"any"`
	Value     abi.Value              `ddb:"value"`
	Attrs     abi.Item               `ddb:"attrs"`
	Ignored   string                 `ddb:"-"`
	DefaultIs string                 // "defaultIs"
	unexp     string                 //nolint:unused
	Deep      map[string][]*Inner    `ddb:"deep"`
	Pointers  []*float64             `ddb:"pointers"`
	Blobs     [][]byte               `ddb:"blobs"`
	Mixed     map[string]interface{} `ddb:"mixed"`
}

func TestW2_MappingRoundTrip(t *testing.T) {
	f := 2.5
	in := everything{
		Base: Base{ID: "x-1"}, Name: "héllo", Amount: "12345678901234567890123456789012345678", I: -42, I8: -8,
		U64: math.MaxUint64, F: 0.1, F32: 1.5, OK: true, Raw: []byte{0, 1, 2}, Nested: Inner{Label: "n", Count: 3},
		Ptr: &Inner{Label: "p"}, Tags: []string{"a", "b"}, NoTags: nil, Matrix: [][]int64{{1, 2}, {}},
		Scores: map[string]float64{"x": 1.25, "y": -3}, Children: []Inner{{Label: "c1"}, {Label: "c2", Count: 9}},
		Any: map[string]any{"k": "v", "n": guest.Number("1"), "l": []any{true, nil}}, Value: abi.SS("s1", "s2"),
		Attrs: abi.Item{"z": abi.NS("1", "2")}, Ignored: "no", DefaultIs: "yes",
		Deep: map[string][]*Inner{"d": {{Label: "deep"}, nil}}, Pointers: []*float64{&f, nil}, Blobs: [][]byte{{1}, {}},
		Mixed: map[string]interface{}{"b": []byte{7}},
	}
	it, err := guest.ToItem(in)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]abi.Value{
		"id": abi.S("x-1"), "name": abi.S("héllo"), "empty": abi.S(""), "amount": abi.N("12345678901234567890123456789012345678"),
		"i": abi.N("-42"), "i8": abi.N("-8"), "u64": abi.N("18446744073709551615"), "f": abi.N("0.1"), "f32": abi.N("1.5"),
		"ok": abi.Bool(true), "raw": abi.B([]byte{0, 1, 2}), "nested": abi.M(abi.Item{"label": abi.S("n"), "count": abi.N("3")}),
		"tags": abi.L(abi.S("a"), abi.S("b")), "value": abi.SS("s1", "s2"), "defaultIs": abi.S("yes"),
		"scores": abi.M(abi.Item{"x": abi.N("1.25"), "y": abi.N("-3")}),
	} {
		if got := it[name]; !got.Equal(want) {
			t.Errorf("%s: got %#v, want %#v", name, got, want)
		}
	}
	for _, absent := range []string{"nilPtr", "noTags", "Ignored", "ignored", "unexp"} {
		if _, ok := it[absent]; ok {
			t.Errorf("%s stored", absent)
		}
	}
	var out everything
	if err := guest.FromItem(it, &out); err != nil {
		t.Fatal(err)
	}
	in.Ignored = ""
	in.Any = map[string]any{"k": "v", "n": guest.Number("1"), "l": []any{true, nil}}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", out, in)
	}
}

func TestW2_MappingReadsSetsNullsAndRejectsMismatches(t *testing.T) {
	var v struct {
		Tags  []string       `ddb:"tags"`
		Nums  []guest.Number `ddb:"nums"`
		Ints  []int          `ddb:"ints"`
		Blobs [][]byte       `ddb:"blobs"`
		Name  string         `ddb:"name"`
		N     int64          `ddb:"n"`
		P     *string        `ddb:"p"`
	}
	v.Name, v.N = "old", 7
	err := guest.FromItem(abi.Item{"tags": abi.SS("a"), "nums": abi.NS("1.5"), "ints": abi.NS("3", "1e2"), "blobs": abi.BS([]byte("x")),
		"name": abi.Null(), "n": abi.Null(), "p": abi.Null()}, &v)
	if err != nil {
		t.Fatal(err)
	}
	if v.Tags[0] != "a" || v.Nums[0] != "1.5" || v.Ints[1] != 100 || string(v.Blobs[0]) != "x" || v.Name != "" || v.N != 0 || v.P != nil {
		t.Fatalf("%+v", v)
	}
	for name, bad := range map[string]abi.Item{
		"string from N":     {"name": abi.N("1")},
		"int from fraction": {"n": abi.N("1.5")},
		"int from S":        {"n": abi.S("1")},
		"int8 overflow":     {"i8": abi.N("300")},
		"uint negative":     {"u": abi.N("-1")},
	} {
		var w struct {
			Name string `ddb:"name"`
			N    int64  `ddb:"n"`
			I8   int8   `ddb:"i8"`
			U    uint   `ddb:"u"`
		}
		if err := guest.FromItem(bad, &w); err == nil {
			t.Errorf("%s: decoded %+v", name, w)
		}
	}
	if _, err := guest.ToItem(struct{ F float64 }{math.Inf(1)}); err == nil {
		t.Error("+Inf encoded")
	}
	if _, err := guest.ToItem(struct{ F float64 }{math.NaN()}); err == nil {
		t.Error("NaN encoded")
	}
	if _, err := guest.ToItem("not an item"); err == nil {
		t.Error("a string mapped to an item")
	}
	if err := guest.FromItem(abi.Item{}, struct{}{}); err == nil {
		t.Error("decoded into a non-pointer")
	}
}

type node struct {
	Name string  `ddb:"name"`
	Kids []*node `ddb:"kids"`
}

func TestW2_MappingRecursiveTypes(t *testing.T) {
	in := node{Name: "root", Kids: []*node{{Name: "a", Kids: []*node{{Name: "b"}}}}}
	it, err := guest.ToItem(in)
	if err != nil {
		t.Fatal(err)
	}
	var out node
	if err := guest.FromItem(it, &out); err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("%+v %v", out, err)
	}
	// Hostile nesting is refused, not a stack overflow.
	v := abi.M(abi.Item{"name": abi.S("leaf")})
	for i := 0; i < 200; i++ {
		v = abi.M(abi.Item{"kids": abi.L(v)})
	}
	if err := guest.FromItem(v.Map, &out); err == nil {
		t.Fatal("200 levels decoded")
	}
}

// A value that does not fit its field (of the wrong kind, or a number the
// field's type cannot hold) names the attribute, so a plugin's error says
// which part of an event to fix ("price", not "at byte 24").
func TestW2_AMismatchNamesTheAttribute(t *testing.T) {
	type line struct {
		Price guest.Decimal `ddb:"price"`
	}
	for want, bad := range map[string]abi.Item{
		`attribute "name": cannot decode N into string`:                {"name": abi.N("1")},
		`attribute "n": cannot decode S into int64`:                    {"n": abi.S("three")},
		`attribute "price": cannot decode S into guest.Decimal`:        {"lines": abi.L(abi.M(abi.Item{"price": abi.S("1.5")}))},
		`attribute "n": number "1e400" does not fit int64`:             {"n": abi.N("1e400")},
		`attribute "small": number "300" does not fit int8`:            {"small": abi.N("300")},
		`attribute "price": number "1e400" does not fit guest.Decimal`: {"lines": abi.L(abi.M(abi.Item{"price": abi.N("1e400")}))},
	} {
		var w struct {
			Name  string `ddb:"name"`
			N     int64  `ddb:"n"`
			Small int8   `ddb:"small"`
			Lines []line `ddb:"lines"`
		}
		err := guest.FromItem(bad, &w)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one containing %q", bad, err, want)
		}
	}
}
