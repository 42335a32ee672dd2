package expr

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func TestConformance_ExprProjection(t *testing.T) {
	item := testItem()
	cases := []struct {
		expr string
		want abi.Item
	}{
		{"a", abi.Item{"a": abi.N("5")}},
		{"a, s, nope", abi.Item{"a": abi.N("5"), "s": abi.S("hello")}},
		{"m.k", abi.Item{"m": abi.M(map[string]abi.Value{"k": abi.S("v")})}},
		{"m.n.d, m.k", abi.Item{"m": abi.M(map[string]abi.Value{"k": abi.S("v"), "n": abi.M(map[string]abi.Value{"d": abi.N("4")})})}},
		{"l[2].c, l[0]", abi.Item{"l": abi.L(abi.N("1"), abi.M(map[string]abi.Value{"c": abi.N("3")}))}},
		{"l[9]", abi.Item{}},
		{"a.b", abi.Item{}},
		{"l[0][0], m.k.x, l[2].c.d", abi.Item{}},
		{"#dot", abi.Item{"x.y": abi.S("dotted")}},
		{"#s", abi.Item{"status": abi.S("ok")}},
	}
	for _, c := range cases {
		p, err := ParseProjection(c.expr, testParams())
		if err != nil {
			t.Errorf("ParseProjection(%q): %v", c.expr, err)
			continue
		}
		got := p.Apply(item)
		if !abi.ItemsEqual(got, c.want) {
			t.Errorf("Apply(%q) = %v, want %v", c.expr, got, c.want)
		}
	}
	if p, _ := ParseProjection("a", testParams()); p.Apply(nil) != nil {
		t.Error("Apply(nil) should be nil")
	}
	if got := func() abi.Item { p, _ := ParseProjection("nope", testParams()); return p.Apply(testItem()) }(); got == nil || len(got) != 0 {
		t.Errorf("Apply of absent paths = %v, want an empty item", got)
	}
	// The projection is a copy.
	p, _ := ParseProjection("l", testParams())
	got := p.Apply(item)
	got["l"].List[0] = abi.S("changed")
	if item["l"].List[0].Str == "changed" {
		t.Error("Apply shares memory with the item")
	}
}

func TestConformance_ExprProjectionErrors(t *testing.T) {
	cases := []struct{ expr, msg string }{
		{"", "Invalid ProjectionExpression: The expression can not be empty;"},
		{"a,", `Invalid ProjectionExpression: Syntax error; token: "<EOF>", near: ","`},
		{"a b", `Invalid ProjectionExpression: Syntax error; token: "b", near: "a b"`},
		{"a[x]", `Invalid ProjectionExpression: Syntax error; token: "x", near: "[x]"`},
		{"COMMENT", "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved keyword: COMMENT"},
		{"add", "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved keyword: add"},
		{"#missing", "Invalid ProjectionExpression: An expression attribute name used in the document path is not defined; attribute name: #missing"},
		{"a, a", "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"},
		{"a.b, a", "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a, b], path two: [a]"},
		{"a[0], a.b", "Invalid ProjectionExpression: Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, [0]], path two: [a, b]"},
	}
	for _, c := range cases {
		_, err := ParseProjection(c.expr, testParams())
		wantValidation(t, err, c.msg)
	}
}

func TestConformance_ExprSelect(t *testing.T) {
	item := testItem()
	got := Select(item, []Path{{{Name: "m"}, {Name: "k"}}, {{Name: "a"}}, {{Name: "nope"}}})
	want := abi.Item{"a": abi.N("5"), "m": abi.M(map[string]abi.Value{"k": abi.S("v")})}
	if !abi.ItemsEqual(got, want) {
		t.Errorf("Select = %v, want %v", got, want)
	}
	if Select(nil, []Path{{{Name: "a"}}}) != nil {
		t.Error("Select(nil) should be nil")
	}
}
