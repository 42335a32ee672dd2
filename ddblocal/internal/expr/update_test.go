package expr

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func applyUpdate(t *testing.T, expr string, item abi.Item) (abi.Item, error) {
	t.Helper()
	u, err := ParseUpdate(expr, testParams())
	if err != nil {
		t.Fatalf("ParseUpdate(%q): %v", expr, err)
	}
	return u.Apply(item)
}

func TestConformance_ExprUpdateApply(t *testing.T) {
	m := func(kv ...any) abi.Value {
		out := map[string]abi.Value{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1].(abi.Value)
		}
		return abi.M(out)
	}
	cases := []struct {
		expr string
		in   abi.Item
		want abi.Item
	}{
		{"SET a = :n1", nil, abi.Item{"a": abi.N("1")}},
		{"SET a = :n1, b = :s", abi.Item{"a": abi.N("9")}, abi.Item{"a": abi.N("1"), "b": abi.S("hello")}},
		{"set a = a + :n2", abi.Item{"a": abi.N("5")}, abi.Item{"a": abi.N("7")}},
		{"SET a = a - :n10", abi.Item{"a": abi.N("5")}, abi.Item{"a": abi.N("-5")}},
		{"SET a = (a + :n2)", abi.Item{"a": abi.N("5")}, abi.Item{"a": abi.N("7")}},
		{"SET a = :n1 + :n2", nil, abi.Item{"a": abi.N("3")}},
		{"SET a = b, b = a", abi.Item{"a": abi.N("1"), "b": abi.N("2")}, abi.Item{"a": abi.N("2"), "b": abi.N("1")}},
		{"SET a = if_not_exists(a, :n1)", nil, abi.Item{"a": abi.N("1")}},
		{"SET a = if_not_exists(a, :n1)", abi.Item{"a": abi.N("5")}, abi.Item{"a": abi.N("5")}},
		{"SET l = list_append(l, :l)", abi.Item{"l": abi.L(abi.S("z"))}, abi.Item{"l": abi.L(abi.S("z"), abi.N("1"), abi.S("x"))}},
		{"SET l = list_append(:l, l)", abi.Item{"l": abi.L(abi.S("z"))}, abi.Item{"l": abi.L(abi.N("1"), abi.S("x"), abi.S("z"))}},
		{"SET l = list_append(if_not_exists(l, :empty), :l)", nil, abi.Item{"l": abi.L(abi.N("1"), abi.S("x"))}},
		{"SET m.k = :s", abi.Item{"m": m("k", abi.S("v"))}, abi.Item{"m": m("k", abi.S("hello"))}},
		{"SET m.fresh = :s", abi.Item{"m": m()}, abi.Item{"m": m("fresh", abi.S("hello"))}},
		{"SET #m.#a = :n1", abi.Item{"m": m()}, abi.Item{"m": m("a", abi.N("1"))}},
		{"SET l[1] = :s", abi.Item{"l": abi.L(abi.N("0"), abi.N("1"))}, abi.Item{"l": abi.L(abi.N("0"), abi.S("hello"))}},
		{"SET l[10] = :s", abi.Item{"l": abi.L(abi.N("0"))}, abi.Item{"l": abi.L(abi.N("0"), abi.S("hello"))}},
		{"SET l[0].c = :n1", abi.Item{"l": abi.L(m())}, abi.Item{"l": abi.L(m("c", abi.N("1")))}},
		{"SET l[84] = :n1, l[37] = :n2, l[17] = :n5, l[50] = :n10", abi.Item{"l": abi.L(abi.N("0"))}, abi.Item{"l": abi.L(abi.N("0"), abi.N("5"), abi.N("2"), abi.N("10"), abi.N("1"))}},
		{"REMOVE l[1] SET l[3] = :n10", abi.Item{"l": abi.L(abi.N("2"), abi.N("3"), abi.N("4"), abi.N("5"), abi.N("6"))}, abi.Item{"l": abi.L(abi.N("2"), abi.N("4"), abi.N("10"), abi.N("6"))}},
		{"REMOVE x.y, z[0]", nil, abi.Item{}},
		{"REMOVE a", abi.Item{"a": abi.N("1"), "b": abi.N("2")}, abi.Item{"b": abi.N("2")}},
		{"REMOVE nope, m.nope, l[7]", abi.Item{"l": abi.L(), "m": m()}, abi.Item{"l": abi.L(), "m": m()}},
		{"REMOVE l[0], l[2]", abi.Item{"l": abi.L(abi.N("0"), abi.N("1"), abi.N("2"), abi.N("3"))}, abi.Item{"l": abi.L(abi.N("1"), abi.N("3"))}},
		{"REMOVE l[0], l[1].c", abi.Item{"l": abi.L(abi.N("0"), m("c", abi.N("1"), "d", abi.N("2")))}, abi.Item{"l": abi.L(m("d", abi.N("2")))}},
		{"REMOVE m.k", abi.Item{"m": m("k", abi.S("v"), "j", abi.S("w"))}, abi.Item{"m": m("j", abi.S("w"))}},
		{"ADD a :n2", abi.Item{"a": abi.N("5")}, abi.Item{"a": abi.N("7")}},
		{"ADD a :n2", nil, abi.Item{"a": abi.N("2")}},
		{"ADD ss :ss", abi.Item{"ss": abi.SS("b", "c")}, abi.Item{"ss": abi.SS("a", "b", "c")}},
		{"ADD ns :ns", abi.Item{"ns": abi.NS("2.0", "3")}, abi.Item{"ns": abi.NS("2.0", "3", "1")}},
		{"ADD ns :ns", nil, abi.Item{"ns": abi.NS("1", "2")}},
		{"DELETE ss :ss", abi.Item{"ss": abi.SS("a", "c")}, abi.Item{"ss": abi.SS("c")}},
		{"DELETE ss :ss", abi.Item{"ss": abi.SS("a", "b")}, abi.Item{}},
		{"DELETE ss :ss", nil, abi.Item{}},
		{"DELETE bs :bs", abi.Item{"bs": abi.BS([]byte("x"), []byte("y"))}, abi.Item{"bs": abi.BS([]byte("y"))}},
		{"DELETE ns :ns", abi.Item{"ns": abi.NS("1.0", "7")}, abi.Item{"ns": abi.NS("7")}},
		{"SET a = :n1 REMOVE b ADD c :n2 DELETE ss :ss", abi.Item{"b": abi.N("0"), "ss": abi.SS("a")}, abi.Item{"a": abi.N("1"), "c": abi.N("2")}},
		{"REMOVE b SET a = b", abi.Item{"b": abi.N("3")}, abi.Item{"a": abi.N("3")}},
	}
	for _, c := range cases {
		in := abi.CloneItem(c.in)
		got, err := applyUpdate(t, c.expr, c.in)
		if err != nil {
			t.Errorf("Apply(%q): %v", c.expr, err)
			continue
		}
		if !abi.ItemsEqual(got, c.want) {
			t.Errorf("Apply(%q) = %v, want %v", c.expr, got, c.want)
		}
		if !abi.ItemsEqual(in, c.in) {
			t.Errorf("Apply(%q) modified its input", c.expr)
		}
	}
}

func TestConformance_ExprUpdateRuntimeErrors(t *testing.T) {
	cases := []struct {
		expr string
		in   abi.Item
		msg  string
	}{
		{"SET a = b", nil, msgMissingAttr},
		{"SET a = if_not_exists(a, b)", nil, msgMissingAttr},
		{"SET a = a + :n1", abi.Item{"a": abi.S("x")}, msgBadOperandType},
		{"SET a = s - :n1", abi.Item{"s": abi.S("x")}, msgBadOperandType},
		{"SET l = list_append(l, :l)", abi.Item{"l": abi.S("x")}, msgBadOperandType},
		{"SET m.k = :s", nil, msgInvalidPath},
		{"SET m.k.j = :s", abi.Item{"m": abi.M(nil)}, msgInvalidPath},
		{"SET s.k = :s", abi.Item{"s": abi.S("x")}, msgInvalidPath},
		{"SET l[0] = :s", abi.Item{"l": abi.M(nil)}, msgInvalidPath},
		{"SET l[3].c = :s", abi.Item{"l": abi.L()}, msgInvalidPath},
		{"ADD a :n1", abi.Item{"a": abi.S("x")}, msgBadOperandType},
		{"ADD ss :ns", abi.Item{"ss": abi.SS("x")}, msgBadOperandType},
		{"DELETE ss :ns", abi.Item{"ss": abi.SS("x")}, msgBadOperandType},
		{"ADD m.k :n1", nil, msgInvalidPath},
		{"REMOVE a.c", abi.Item{"a": abi.S("x")}, msgInvalidPath},
		{"REMOVE c.c", abi.Item{"a": abi.S("x")}, msgInvalidPath},
		{"REMOVE a[0]", abi.Item{"a": abi.S("x")}, msgInvalidPath},
		{"REMOVE b[0]", abi.Item{"a": abi.S("x")}, msgInvalidPath},
		{"REMOVE m.x.y", abi.Item{"m": abi.M(nil)}, msgInvalidPath},
		{"DELETE m.x :ss", abi.Item{"a": abi.S("x")}, msgInvalidPath},
		{"SET a = a + :n1", abi.Item{"a": abi.N("9.9999999999999999999999999999999999999E+125")}, msgOverflow},
	}
	for _, c := range cases {
		_, err := applyUpdate(t, c.expr, c.in)
		wantValidation(t, err, c.msg)
	}
}

func TestConformance_ExprUpdateParseErrors(t *testing.T) {
	cases := []struct{ expr, msg string }{
		{"", "Invalid UpdateExpression: The expression can not be empty;"},
		{"SET _123 = :n1", `Invalid UpdateExpression: Syntax error; token: "_", near: "SET _123"`},
		{"SET a = :n1,", `Invalid UpdateExpression: Syntax error; token: "<EOF>", near: ","`},
		{"SET a :n1", `Invalid UpdateExpression: Syntax error; token: ":n1", near: "a :n1"`},
		{"ADD a b", `Invalid UpdateExpression: Syntax error; token: "b", near: "a b"`},
		{"PUT a = :n1", `Invalid UpdateExpression: Syntax error; token: "PUT", near: "PUT a"`},
		{"SET a = :n1 SET b = :n2", `Invalid UpdateExpression: The "SET" section can only be used once in an update expression;`},
		{"SET #x = :n1", "Invalid UpdateExpression: An expression attribute name used in the document path is not defined; attribute name: #x"},
		{"SET a = :nope", "Invalid UpdateExpression: An expression attribute value used in expression is not defined; attribute value: :nope"},
		{"SET status = :n1", "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: status"},
		{"SET a = :n1, a = :n2", "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"},
		{"SET a.b = :n1 REMOVE a", "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a, b], path two: [a]"},
		{"SET a[1] = :n1 REMOVE a.b", "Invalid UpdateExpression: Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, [1]], path two: [a, b]"},
		{"SET a = dog(b)", "Invalid UpdateExpression: Invalid function name; function: dog"},
		{"SET a = size(b)", "Invalid UpdateExpression: The function is not allowed to be used this way in an expression; function: size"},
		{"SET a = list_append(b, c, d)", "Invalid UpdateExpression: Incorrect number of operands for operator or function; operator or function: list_append, number of operands: 3"},
		{"SET a = if_not_exists(:n1, b)", "Invalid UpdateExpression: Operator or function requires a document path; operator or function: if_not_exists"},
		{"SET a = list_append(list_append(:l, :l), :l)", "Invalid UpdateExpression: The function is not allowed to be used this way in an expression; function: list_append"},
		{"SET a = if_not_exists(if_not_exists(a, :n1), :n2)", "Invalid UpdateExpression: Operator or function requires a document path; operator or function: if_not_exists"},
		{"SET a = if_not_exists(:nope, :n1)", "Invalid UpdateExpression: An expression attribute value used in expression is not defined; attribute value: :nope"},
		{"SET a = f(b, c, d)", "Invalid UpdateExpression: Invalid function name; function: f"},
		{"SET a = if_not_exists(a, :n1 + :n2)", `Invalid UpdateExpression: Syntax error; token: "+", near: ":n1 + :n2"`},
		{"SET a = list_append(b, :s)", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: list_append, operand type: S"},
		{"SET a = b + :s", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: +, operand type: S"},
		{"ADD a :s", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: STRING"},
		{"ADD a :l", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: LIST"},
		{"DELETE a :n1", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: DELETE, operand type: NUMBER"},
	}
	for _, c := range cases {
		_, err := ParseUpdate(c.expr, testParams())
		wantValidation(t, err, c.msg)
	}
}

func TestConformance_ExprUpdateApplyMissing(t *testing.T) {
	key := abi.Item{"p": abi.S("k")}
	u, err := ParseUpdate("REMOVE x.y, z[0] SET a = p DELETE m.s :ss", testParams())
	if err != nil {
		t.Fatal(err)
	}
	got, err := u.ApplyMissing(key)
	if err != nil {
		t.Fatal(err)
	}
	if want := (abi.Item{"p": abi.S("k"), "a": abi.S("k")}); !abi.ItemsEqual(got, want) {
		t.Fatalf("ApplyMissing = %v, want %v", got, want)
	}
	if len(key) != 1 {
		t.Fatal("ApplyMissing modified the key")
	}
	// The same update on an existing item is an error.
	_, err = u.Apply(abi.Item{"p": abi.S("k")})
	wantValidation(t, err, msgInvalidPath)
	// SET of a nested path is an error on a missing item too.
	u, _ = ParseUpdate("SET c.c = :n1", testParams())
	_, err = u.ApplyMissing(key)
	wantValidation(t, err, msgInvalidPath)
}

func TestConformance_ExprUpdatePaths(t *testing.T) {
	u, err := ParseUpdate("SET a.b = :n1, #m[2] = :n2 REMOVE c ADD d :n1", testParams())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range u.Paths() {
		got = append(got, p.String())
	}
	want := []string{"a.b", "m[2]", "c", "d"}
	if len(got) != len(want) {
		t.Fatalf("Paths = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Paths = %v, want %v", got, want)
		}
	}
}
