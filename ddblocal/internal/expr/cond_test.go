package expr

import (
	"strings"
	"testing"
)

func TestConformance_ExprConditionEval(t *testing.T) {
	cases := []struct {
		expr string
		want bool
	}{
		{"a = :n5", true},
		{"a = :n1", false},
		{"a <> :n1", true},
		{"nope <> :n1", true},
		{"nope = :n1", false},
		{"a < :n10", true},
		{"a <= :n5", true},
		{"a > :n5", false},
		{"a >= :n5", true},
		{"s > :sa", true},
		{"a < :s", false}, // different types compare false
		{"a <> :s", true},
		{"s = :s", true},
		{":n1 < a", true},
		{"a BETWEEN :n1 AND :n10", true},
		{"a BETWEEN :n10 AND :n10", false},
		{"a between :n1 and :n5", true},
		{"a IN (:n1, :n2, :n5)", true},
		{"a IN (:n1, :n2)", false},
		{"attribute_exists(a)", true},
		{"attribute_exists(nope)", false},
		{"attribute_not_exists(nope)", true},
		{"attribute_exists(m.n.d)", true},
		{"attribute_exists(m.n.e)", false},
		{"attribute_exists(l[2].c)", true},
		{"attribute_exists(l[3])", false},
		{"attribute_exists(a.b)", false},
		{"attribute_type(s, :typeS)", true},
		{"attribute_type(a, :typeS)", false},
		{"attribute_type(a, :typeN)", true},
		{"begins_with(s, :he)", true},
		{"begins_with(s, :sa)", false},
		{"begins_with(a, :he)", false},
		{"contains(s, :he)", true},
		{"contains(ss, :sa)", true},
		{"contains(ss, :s)", false},
		{"contains(ns, :n2)", true},
		{"contains(l, :n1)", true},
		{"contains(l, :s)", false},
		{"contains(bs, :b)", false},
		{"size(s) = :n5", true},
		{"size(u) = :n1", false},
		{"size(b) > :n5", true},
		{"size(ss) < :n10", true},
		{"size(l) > :n2", true},
		{"size(m) = :n2", true},
		{"size(a) = :n1", false},
		{"size(s) = :s", false},
		{"size(s) = a", true},
		{"#s = :s", false},
		{"#dot = :s", false},
		{"attribute_exists(#dot)", true},
		{"attribute_exists(#m.k)", true},
		{"m.k = l[1]", false},
		{"l[0] = :n1", true},
		{"NOT a = :n1", true},
		{"NOT NOT NOT NOT a < :n10", true},
		{"a = :n1 OR a = :n5", true},
		{"a = :n1 AND a = :n5", false},
		{"a = :n5 OR a = :n1 AND a = :n2", true},    // AND binds tighter
		{"(a = :n5 OR a = :n1) AND a = :n2", false}, // parentheses
		{"NOT a = :n5 OR a = :n5", true},            // NOT binds tighter than OR
		{"NOT (a = :n5 OR a = :n1)", false},
		{"(a) = :n5", true},
		{"(((a=:n1) AND s=:s) OR a=:n2 oR a=:n10) or NoT a<:n5", true},
		{"(((a=:n5) AND s=:sa) OR a=:n2 oR a=:n10) or NoT a<=:n5", false},
		{"size(s) IN (:n1, :n5)", true},
		{"size(s) BETWEEN :n1 AND :n5", true},
		{"contains(b, :b)", true},
		{"contains(m, :sa)", false},
		{"contains(t, :t)", false},
		{"((a = :n5) AND (s = :s))", true},
		{"big > :n10", true},
		{"ns = :ns", false},
		{"l = :l", false},
		{"m.k = :m", false},
	}
	for _, c := range cases {
		cond, err := ParseCondition(c.expr, testParams())
		if err != nil {
			t.Errorf("ParseCondition(%q): %v", c.expr, err)
			continue
		}
		got, err := cond.Eval(testItem())
		if err != nil || got != c.want {
			t.Errorf("Eval(%q) = %v, %v; want %v", c.expr, got, err, c.want)
		}
	}
}

func TestConformance_ExprConditionAbsentItem(t *testing.T) {
	for expr, want := range map[string]bool{
		"attribute_not_exists(a)": true,
		"attribute_exists(a)":     false,
		"a = :n1":                 false,
		"a <> :n1":                true,
		"size(a) < :n1":           false,
	} {
		c, err := ParseCondition(expr, testParams())
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		if got, _ := c.Eval(nil); got != want {
			t.Errorf("Eval(%q, nil) = %v, want %v", expr, got, want)
		}
	}
}

func TestConformance_ExprSizeUTF16(t *testing.T) {
	// DynamoDB counts UTF-16 code units: é is 1, 𝄞 is 2.
	p := NewParams(nil, any2{":n": "3"}.values())
	c, err := ParseCondition("size(u) = :n", p)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Eval(testItem()); !ok {
		t.Error("size(\"é𝄞\") should be 3")
	}
}

func TestConformance_ExprConditionErrors(t *testing.T) {
	cases := []struct{ expr, msg string }{
		{"", "Invalid ConditionExpression: The expression can not be empty;"},
		{"foo", `Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "foo"`},
		{"a+:n1<b", `Invalid ConditionExpression: Syntax error; token: "+", near: "a+:n1"`},
		{"a = :n1 AND", `Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "AND"`},
		{"a != :n1", `Invalid ConditionExpression: Syntax error; token: "!", near: "a !="`},
		{"_a = :n1", `Invalid ConditionExpression: Syntax error; token: "_", near: "_a"`},
		{"a IN ()", `Invalid ConditionExpression: Syntax error; token: ")", near: "()"`},
		{"status = :s", "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: status"},
		{"a.Size = :s", "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: Size"},
		{"#x = :s", "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; attribute name: #x"},
		{"a = :nope", "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :nope"},
		{"dog(a) = :n1", "Invalid ConditionExpression: Invalid function name; function: dog"},
		{"size(a)", "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: size"},
		{"attribute_exists(a) < :n1", "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: attribute_exists"},
		{"if_not_exists(a, a) = :n1", "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: if_not_exists"},
		{"size(a, a) = :n1", "Invalid ConditionExpression: Incorrect number of operands for operator or function; operator or function: size, number of operands: 2"},
		{"attribute_exists(:n1)", "Invalid ConditionExpression: Operator or function requires a document path; operator or function: attribute_exists"},
		{"begins_with(a, :n1)", "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"},
		{"attribute_type(a, :n1)", "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: attribute_type, operand type: N"},
		{"attribute_type(a, :typeBad)", "Invalid ConditionExpression: Invalid attribute type name found; type: X, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}"},
		{"size(:n1) = :n1", "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: size, operand type: N"},
		{"a = a", "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [a]"},
		{"contains(a, a)", "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: contains, first operand: [a]"},
		{"a BETWEEN :n1 AND :s", "Invalid ConditionExpression: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:hello}"},
		{"a BETWEEN :n10 AND :n1", "Invalid ConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {N:10}, upper bound operand: AttributeValue: {N:1}"},
		{"a < :l", "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: <, operand type: L"},
		{":ss >= a", "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: >=, operand type: SS"},
		{"a BETWEEN :t AND :t", "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: BOOL"},
		{"((a = :n1))", "Invalid ConditionExpression: The expression has redundant parentheses;"},
		{"((a)) = :n1", "Invalid ConditionExpression: The expression has redundant parentheses;"},
	}
	for _, c := range cases {
		_, err := ParseCondition(c.expr, testParams())
		wantValidation(t, err, c.msg)
	}
}

func TestConformance_ExprFilterNamesItsKind(t *testing.T) {
	_, err := ParseFilter("status = :s", testParams())
	wantValidation(t, err, "Invalid FilterExpression: Attribute name is a reserved keyword; reserved keyword: status")
	_, err = ParseFilter("", testParams())
	wantValidation(t, err, "Invalid FilterExpression: The expression can not be empty;")
}

func TestConformance_ExprInLimit(t *testing.T) {
	vals := any2{}
	list := ""
	for i := 0; i < 101; i++ {
		k := ":v" + itoa(i)
		vals[k] = itoa(i)
		if i > 0 {
			list += ", "
		}
		list += k
	}
	_, err := ParseCondition("a IN ("+list+")", NewParams(nil, vals.values()))
	wantValidation(t, err, "Invalid ConditionExpression: The IN operator is provided with too many operands; number of operands: 101")
	// 100 is fine (the first operand is not counted).
	_, err = ParseCondition("a IN ("+list[:len(list)-len(", :v100")]+")", NewParams(nil, vals.values()))
	if err != nil {
		t.Fatal(err)
	}
}

func TestConformance_ExprUnusedParams(t *testing.T) {
	p := testParams()
	if _, err := ParseCondition("#s = :s", p); err != nil {
		t.Fatal(err)
	}
	wantValidation(t, p.CheckUnused(), "Value provided in ExpressionAttributeNames unused in expressions: keys: {#a, #dot, #m}")
	p = NewParams(map[string]string{"#s": "status"}, any2{":s": "1", ":v": "2"}.values())
	if _, err := ParseCondition("#s = :s", p); err != nil {
		t.Fatal(err)
	}
	wantValidation(t, p.CheckUnused(), "Value provided in ExpressionAttributeValues unused in expressions: keys: {:v}")
	if _, err := ParseProjection("a, #s", p); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseUpdate("SET x = :v", p); err != nil {
		t.Fatal(err)
	}
	if err := p.CheckUnused(); err != nil {
		t.Fatal(err)
	}
}

func TestConformance_ExprParamsValidate(t *testing.T) {
	wantValidation(t, NewParams(map[string]string{}, nil).Validate(true, false), "ExpressionAttributeNames must not be empty")
	wantValidation(t, NewParams(map[string]string{"a": "a"}, nil).Validate(true, false), `ExpressionAttributeNames contains invalid key: Syntax error; key: "a"`)
	wantValidation(t, NewParams(nil, any2{"a": "1"}.values()).Validate(false, true), `ExpressionAttributeValues contains invalid key: Syntax error; key: "a"`)
	if err := testParams().Validate(true, true); err != nil {
		t.Fatal(err)
	}
}

func TestConformance_ExprSizeLimit(t *testing.T) {
	long := "a = :n1" + strings.Repeat(" ", 4096-7)
	if _, err := ParseCondition(long, testParams()); err != nil {
		t.Fatalf("4096 bytes: %v", err)
	}
	_, err := ParseFilter(long+" ", testParams())
	wantValidation(t, err, "Invalid FilterExpression: Expression size has exceeded the maximum allowed size; expression size: 4097")
	_, err = ParseUpdate("SET a = :n1"+strings.Repeat(" ", 4096), testParams())
	wantValidation(t, err, "Invalid UpdateExpression: Expression size has exceeded the maximum allowed size; expression size: 4107")
}

func TestExpr_ConditionPaths(t *testing.T) {
	c, err := ParseCondition("#s = :s AND (size(m.k) > :n1 OR contains(l[2], :sa))", testParams())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.Paths() {
		got = append(got, p.String())
	}
	if strings.Join(got, ",") != "status,m.k,l[2]" {
		t.Fatalf("Paths = %v", got)
	}
}
