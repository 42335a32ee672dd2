package conformance

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// condItem is the item every condition case is evaluated against.
var condItem = Item{
	"pk": s("a"), "n": n("5"), "ten": n("10"), "neg": n("-10"), "s": s("hello"), "es": s(""),
	"b": b([]byte{1, 2}), "bhi": b([]byte{0x80}), "t": bl(true), "nul": null(),
	"ss": ss("x", "y"), "ns": ns("1", "2", "3"), "bs": bs([]byte{1}, []byte{2}),
	"l":        l(s("a"), n("2"), m(Item{"m": s("deep")})),
	"m":        m(Item{"k": s("v"), "in2": m(Item{"x": n("1")})}),
	"big":      n("12345678901234567890123456789012345678"),
	"small":    n("0.000000000000000000000000000000000001"),
	"emoji":    s("\U0001F600"),
	"dot.name": s("dotted"),
}

type condCase struct {
	expr string
	nm   map[string]string
	vals Item
	want bool
}

var condCases = []condCase{
	// comparators on numbers (numeric, not lexical)
	{"n = :v", nil, Item{":v": n("5")}, true},
	{"n = :v", nil, Item{":v": n("5.000")}, true},
	{"n = :v", nil, Item{":v": n("0.5E1")}, true},
	{"n <> :v", nil, Item{":v": n("5")}, false},
	{"n < :v", nil, Item{":v": n("6")}, true},
	{"n <= :v", nil, Item{":v": n("5")}, true},
	{"n > :v", nil, Item{":v": n("4.99")}, true},
	{"n >= :v", nil, Item{":v": n("5.01")}, false},
	{"ten > :v", nil, Item{":v": n("9")}, true},
	{"neg < :v", nil, Item{":v": n("-9")}, true},
	{"big = :v", nil, Item{":v": n("12345678901234567890123456789012345678")}, true},
	{"big > :v", nil, Item{":v": n("12345678901234567890123456789012345677")}, true},
	{"small > :v", nil, Item{":v": n("0")}, true},
	{"small < :v", nil, Item{":v": n("0.000000000000000000000000000000000002")}, true},
	{"s < :v", nil, Item{":v": s("hellp")}, true},
	{"s > :v", nil, Item{":v": s("hello")}, false},
	{"es = :v", nil, Item{":v": s("")}, true},
	// binary by unsigned bytes
	{"b > :v", nil, Item{":v": b([]byte{1})}, true},
	{"b < :v", nil, Item{":v": b([]byte{2})}, true},
	{"b < :v", nil, Item{":v": b([]byte{1, 1})}, false},
	{"bhi > :v", nil, Item{":v": b([]byte{0x7f})}, true},
	// different types never compare equal or ordered
	{"n = :v", nil, Item{":v": s("5")}, false},
	{"n < :v", nil, Item{":v": s("6")}, false},
	{"nothere = :v", nil, Item{":v": n("5")}, false},
	// BETWEEN, IN
	{"n BETWEEN :a AND :b", nil, Item{":a": n("1"), ":b": n("5")}, true},
	{"n BETWEEN :a AND :b", nil, Item{":a": n("6"), ":b": n("9")}, false},
	{"n IN (:a, :b, :c)", nil, Item{":a": n("1"), ":b": n("5"), ":c": n("9")}, true},
	{"s IN (:a, :b)", nil, Item{":a": s("x"), ":b": s("y")}, false},
	// AND binds tighter than OR, NOT tighter than AND
	{"n = :five OR n = :one AND s = :nope", nil, Item{":five": n("5"), ":one": n("1"), ":nope": s("nope")}, true},
	{"(n = :five OR n = :one) AND s = :nope", nil, Item{":five": n("5"), ":one": n("1"), ":nope": s("nope")}, false},
	{"NOT n = :five AND n = :one", nil, Item{":five": n("5"), ":one": n("1")}, false},
	{"NOT (n = :five AND n = :one)", nil, Item{":five": n("5"), ":one": n("1")}, true},
	// functions
	{"attribute_exists(s)", nil, nil, true},
	{"attribute_exists(nothere)", nil, nil, false},
	{"attribute_not_exists(nothere)", nil, nil, true},
	{"attribute_exists(m.k)", nil, nil, true},
	{"attribute_exists(m.nothere)", nil, nil, false},
	{"attribute_exists(l[2].m)", nil, nil, true},
	{"attribute_exists(l[5])", nil, nil, false},
	{"attribute_exists(nul)", nil, nil, true},
	{"attribute_type(s, :t)", nil, Item{":t": s("S")}, true},
	{"attribute_type(n, :t)", nil, Item{":t": s("S")}, false},
	{"attribute_type(nul, :t)", nil, Item{":t": s("NULL")}, true},
	{"attribute_type(ss, :t)", nil, Item{":t": s("SS")}, true},
	{"attribute_type(l, :t)", nil, Item{":t": s("L")}, true},
	{"attribute_type(m.in2, :t)", nil, Item{":t": s("M")}, true},
	{"attribute_type(t, :t)", nil, Item{":t": s("BOOL")}, true},
	{"begins_with(s, :p)", nil, Item{":p": s("he")}, true},
	{"begins_with(s, :p)", nil, Item{":p": s("lo")}, false},
	{"begins_with(b, :p)", nil, Item{":p": b([]byte{1})}, true},
	{"contains(s, :p)", nil, Item{":p": s("ell")}, true},
	{"contains(ss, :p)", nil, Item{":p": s("x")}, true},
	{"contains(ss, :p)", nil, Item{":p": s("q")}, false},
	{"contains(ns, :p)", nil, Item{":p": n("2.0")}, true},
	{"contains(bs, :p)", nil, Item{":p": b([]byte{2})}, true},
	{"contains(l, :p)", nil, Item{":p": s("a")}, true},
	{"contains(l, :p)", nil, Item{":p": n("2")}, true},
	{"size(s) = :v", nil, Item{":v": n("5")}, true},
	{"size(ss) = :v", nil, Item{":v": n("2")}, true},
	{"size(l) = :v", nil, Item{":v": n("3")}, true},
	{"size(m) = :v", nil, Item{":v": n("2")}, true},
	{"size(b) = :v", nil, Item{":v": n("2")}, true},
	{"size(nothere) >= :v", nil, Item{":v": n("0")}, false},
	// nested paths and names
	{"m.k = :v", nil, Item{":v": s("v")}, true},
	{"m.in2.x = :v", nil, Item{":v": n("1")}, true},
	{"l[2].m = :v", nil, Item{":v": s("deep")}, true},
	{"l[0] = :v", nil, Item{":v": s("a")}, true},
	{"#m.#k = :v", names("#m", "m", "#k", "k"), Item{":v": s("v")}, true},
	{"#d = :v", names("#d", "dot.name"), Item{":v": s("dotted")}, true},
	// whole values: sets are unordered, lists and maps compare deeply
	{"ss = :v", nil, Item{":v": ss("y", "x")}, true},
	{"ns = :v", nil, Item{":v": ns("3", "2", "1.0")}, true},
	{"t = :v", nil, Item{":v": bl(true)}, true},
	{"ss <> :v", nil, Item{":v": ss("x")}, true},
}

// TestConformance_Condition_Grammar evaluates each expression as a Query
// FilterExpression and as a PutItem ConditionExpression over condItem.
func TestConformance_Condition_Grammar(t *testing.T) {
	t.Parallel()
	runCondCases(t, condCases)
}

// TestConformance_Condition_StringsByUTF8Bytes: the AWS Developer Guide
// (Data types, String) says strings are collated by the bytes of their UTF-8
// encoding, so U+1F600 (F0 9F 98 80) sorts after U+FF61 (EF BD A1), the
// opposite of UTF-16 order.
func TestConformance_Condition_StringsByUTF8Bytes(t *testing.T) {
	t.Parallel()
	// dynalite 4.0.0 compares JavaScript (UTF-16) strings; AWS docs: UTF-8 bytes.
	skipOnDynalite(t, "orders strings by UTF-16 code units, not UTF-8 bytes")
	runCondCases(t, []condCase{
		{"emoji > :v", nil, Item{":v": s("\uFF61")}, true},
		{"emoji < :v", nil, Item{":v": s("\uFF61")}, false},
	})
}

// TestConformance_Condition_DocumentEquality: the AWS API reference (Condition,
// ComparisonOperator) says EQ and NE are supported for all data types,
// including lists and maps.
func TestConformance_Condition_DocumentEquality(t *testing.T) {
	t.Parallel()
	// dynalite 4.0.0 never finds a list or map equal; AWS docs: = works on lists and maps.
	skipOnDynalite(t, "does not compare lists and maps with =")
	runCondCases(t, []condCase{
		{"l = :v", nil, Item{":v": l(s("a"), n("2"), m(Item{"m": s("deep")}))}, true},
		{"l = :v", nil, Item{":v": l(n("2"), s("a"), m(Item{"m": s("deep")}))}, false},
		{"m = :v", nil, Item{":v": m(Item{"in2": m(Item{"x": n("1")}), "k": s("v")})}, true},
		{"m <> :v", nil, Item{":v": m(Item{"k": s("v")})}, true},
	})
}

// TestConformance_Condition_SizeOfEmptyString: empty non-key strings are
// allowed (since 2020) and size() of one is 0.
func TestConformance_Condition_SizeOfEmptyString(t *testing.T) {
	t.Parallel()
	// dynalite 4.0.0 evaluates size("") as absent; AWS docs: size of a String is its length.
	skipOnDynalite(t, "treats size() of an empty string as false")
	runCondCases(t, []condCase{{"size(es) = :v", nil, Item{":v": n("0")}, true}})
}

func runCondCases(t *testing.T, cases []condCase) {
	t.Helper()
	tbl := hashTable(t)
	put(t, tbl, condItem)
	for _, tc := range cases {
		vals := Item{":pk": s("a")}
		for k, v := range tc.vals {
			vals[k] = v
		}
		in := &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :pk"),
			FilterExpression: aws.String(tc.expr), ExpressionAttributeValues: vals}
		if tc.nm != nil {
			in.ExpressionAttributeNames = tc.nm
		}
		out, err := ddb(t).Query(ctx(t), in)
		if err != nil {
			t.Errorf("filter %q %v: %v", tc.expr, plainItem(tc.vals), err)
			continue
		}
		if got := out.Count == 1; got != tc.want {
			t.Errorf("filter %q %v = %v, want %v", tc.expr, plainItem(tc.vals), got, tc.want)
		}
		pin := &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: condItem, ConditionExpression: aws.String(tc.expr)}
		if len(tc.vals) > 0 {
			pin.ExpressionAttributeValues = tc.vals
		}
		if tc.nm != nil {
			pin.ExpressionAttributeNames = tc.nm
		}
		_, err = ddb(t).PutItem(ctx(t), pin)
		var ccf *types.ConditionalCheckFailedException
		switch {
		case tc.want && err != nil:
			t.Errorf("condition %q %v: want success, got %v", tc.expr, plainItem(tc.vals), err)
		case !tc.want && !errors.As(err, &ccf):
			t.Errorf("condition %q %v: want ConditionalCheckFailedException, got %v", tc.expr, plainItem(tc.vals), err)
		}
	}
}

func TestConformance_Condition_Invalid(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("a"), "v": n("1")})
	cases := []struct {
		name string
		expr string
		nm   map[string]string
		vals Item
	}{
		{"Syntax", "v = = :v", nil, Item{":v": n("1")}},
		{"UndefinedValue", "v = :nope", nil, nil},
		{"UndefinedName", "#nope = :v", nil, Item{":v": n("1")}},
		{"UnusedValue", "v = :v", nil, Item{":v": n("1"), ":extra": n("2")}},
		{"UnusedName", "v = :v", names("#x", "x"), Item{":v": n("1")}},
		{"ReservedWordBare", "status = :v", nil, Item{":v": n("1")}},
		{"UnknownFunction", "nosuchfn(v)", nil, nil},
		{"AttributeTypeBadType", "attribute_type(v, :t)", nil, Item{":t": s("XX")}},
		{"BetweenReversed", "v BETWEEN :hi AND :lo", nil, Item{":hi": n("9"), ":lo": n("1")}},
		{"BareOperand", "v", nil, nil},
	}
	for _, tc := range cases {
		in := &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: Item{"pk": s("a"), "v": n("1")}, ConditionExpression: aws.String(tc.expr)}
		if len(tc.vals) > 0 {
			in.ExpressionAttributeValues = tc.vals
		}
		if tc.nm != nil {
			in.ExpressionAttributeNames = tc.nm
		}
		t.Run(tc.name, func(t *testing.T) {
			_, err := ddb(t).PutItem(ctx(t), in)
			requireValidation(t, err, tc.name+": "+tc.expr)
		})
	}
}
