package expr

import (
	"testing"

	"github.com/dynafold/dynafold/abi"
)

func TestConformance_ExprKeyCondition(t *testing.T) {
	types := map[string]string{"p": "S", "c": "N"}
	vals := map[string]abi.Value{":p": abi.S("pk"), ":c": abi.N("5"), ":c2": abi.N("7"), ":cs": abi.S("x")}
	cases := []struct {
		expr  string
		op    string
		match []string // range values that match
		miss  []string
	}{
		{"p = :p", "", nil, nil},
		{" p  =   :p ", "", nil, nil},
		{"p=:p AND c=:c", "=", []string{"5", "5.0"}, []string{"6"}},
		{"p=:p AND c<:c", "<", []string{"4"}, []string{"5", "6"}},
		{"p=:p AND c<=:c", "<=", []string{"5"}, []string{"6"}},
		{"p=:p AND c>:c", ">", []string{"6"}, []string{"5"}},
		{"p=:p AND c>=:c", ">=", []string{"5"}, []string{"4"}},
		{":p=p AND :c<c", ">", []string{"6"}, []string{"5"}},
		{"p=:p AnD c BeTwEeN :c aNd :c2", "BETWEEN", []string{"5", "7"}, []string{"8"}},
		{"c BETWEEN :c AND :c2 AND p = :p", "BETWEEN", []string{"6"}, []string{"4"}},
		{"((c=:c) AND (p=:p))", "=", []string{"5"}, nil},
	}
	for _, tc := range cases {
		kc, err := ParseKeyCondition(tc.expr, NewParams(nil, vals))
		if err != nil {
			t.Errorf("ParseKeyCondition(%q): %v", tc.expr, err)
			continue
		}
		if err := kc.Validate("p", "c", types); err != nil {
			t.Errorf("Validate(%q): %v", tc.expr, err)
			continue
		}
		if kc.HashName != "p" || kc.HashValue.Str != "pk" {
			t.Errorf("%q: hash = %s %v", tc.expr, kc.HashName, kc.HashValue)
		}
		if tc.op == "" {
			if kc.Range != nil {
				t.Errorf("%q: unexpected range %v", tc.expr, kc.Range)
			}
			continue
		}
		if kc.Range == nil || kc.Range.Op != tc.op || kc.Range.Name != "c" {
			t.Errorf("%q: range = %+v, want op %s", tc.expr, kc.Range, tc.op)
			continue
		}
		for _, m := range tc.match {
			if !kc.Range.Match(abi.N(m)) {
				t.Errorf("%q should match %s", tc.expr, m)
			}
		}
		for _, m := range tc.miss {
			if kc.Range.Match(abi.N(m)) {
				t.Errorf("%q should not match %s", tc.expr, m)
			}
		}
	}
}

func TestConformance_ExprKeyConditionBeginsWith(t *testing.T) {
	vals := map[string]abi.Value{":p": abi.S("pk"), ":pre": abi.S("ab"), ":bp": abi.B([]byte{1})}
	kc, err := ParseKeyCondition("p = :p and begins_with(c, :pre)", NewParams(nil, vals))
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Validate("p", "c", map[string]string{"p": "S", "c": "S"}); err != nil {
		t.Fatal(err)
	}
	if !kc.Range.Match(abi.S("abc")) || kc.Range.Match(abi.S("b")) || kc.Range.Match(abi.B([]byte("ab"))) {
		t.Error("begins_with on S range key")
	}
	kc, err = ParseKeyCondition("p = :p and begins_with(c, :bp)", NewParams(nil, vals))
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Validate("p", "c", map[string]string{"p": "S", "c": "B"}); err != nil {
		t.Fatal(err)
	}
	if !kc.Range.Match(abi.B([]byte{1, 2})) || kc.Range.Match(abi.B([]byte{2})) {
		t.Error("begins_with on B range key")
	}
}

func TestConformance_ExprKeyConditionErrors(t *testing.T) {
	vals := map[string]abi.Value{":p": abi.S("pk"), ":c": abi.N("3"), ":c2": abi.N("4"), ":s": abi.S("x"), ":a": abi.N("1"), ":b": abi.N("1")}
	parse := []struct{ expr, msg string }{
		{"", "Invalid KeyConditionExpression: The expression can not be empty;"},
		{"p=:p AND c!=:c", `Invalid KeyConditionExpression: Syntax error; token: "!", near: "c!="`},
		{"p=:p AND p=:p", "KeyConditionExpressions must only contain one condition per key"},
		{"p=:p AND c>=:c AND c<=:c2", "KeyConditionExpressions must only contain one condition per key"},
		{"p=:p AND c=:c AND d=:c", "Conditions can be of length 1 or 2 only"},
		{"p=:nope", "Invalid KeyConditionExpression: An expression attribute value used in expression is not defined; attribute value: :nope"},
		{"p=:p AND c<>:c", "Invalid operator used in KeyConditionExpression: <>"},
		{"p=:p AND c IN (:c)", "Invalid operator used in KeyConditionExpression: IN"},
		{"c=:c OR p=:p", "Invalid operator used in KeyConditionExpression: OR"},
		{"NOT c=:c AND p=:p", "Invalid operator used in KeyConditionExpression: NOT"},
		{"p=:p AND attribute_exists(c)", "Invalid operator used in KeyConditionExpression: attribute_exists"},
		{"p=:p AND dog(c, :c)", "Invalid KeyConditionExpression: Invalid function name; function: dog"},
		{"p=:p AND begins_with(c, :c)", "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"},
		{":s between c and :c", "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand"},
		{"begins_with(:s, c)", "Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand"},
		{"b > a.b", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"},
		{"a > size(b.d)", "KeyConditionExpressions cannot contain nested operations"},
		{"a.d > :c", "KeyConditionExpressions cannot have conditions on nested attributes"},
		{":b > :a AND a < :b", "Invalid condition in KeyConditionExpression: No key attribute specified"},
		{"c between :c2 and :c", "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {N:4}, upper bound operand: AttributeValue: {N:3}"},
	}
	for _, c := range parse {
		_, err := ParseKeyCondition(c.expr, NewParams(nil, vals))
		wantValidation(t, err, c.msg)
	}
	types := map[string]string{"p": "S", "c": "N"}
	validate := []struct{ expr, msg string }{
		{"c=:c", "Query condition missed key schema element: p"},
		{"p<:p", "Query key condition not supported"},
		{"p=:p AND a=:a", "Query condition missed key schema element: c"},
		{"p=:c", "One or more parameter values were invalid: Condition parameter type does not match schema type"},
		{"p=:p AND c=:s", "One or more parameter values were invalid: Condition parameter type does not match schema type"},
	}
	for _, c := range validate {
		kc, err := ParseKeyCondition(c.expr, NewParams(nil, vals))
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		wantValidation(t, kc.Validate("p", "c", types), c.msg)
	}
	kc, _ := ParseKeyCondition("p=:p AND c=:c", NewParams(nil, vals))
	wantValidation(t, kc.Validate("p", "", map[string]string{"p": "S"}), "Query key condition not supported")
}
