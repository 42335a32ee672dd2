package conformance

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// update runs UpdateItem on key {pk: "a"} and returns the attributes answered.
func update(t testing.TB, tbl, expr string, nm map[string]string, vals Item, rv types.ReturnValue) (Item, error) {
	t.Helper()
	in := &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")}, UpdateExpression: aws.String(expr),
		ReturnValues: rv}
	if len(nm) > 0 {
		in.ExpressionAttributeNames = nm
	}
	if len(vals) > 0 {
		in.ExpressionAttributeValues = vals
	}
	out, err := ddb(t).UpdateItem(ctx(t), in)
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}

func TestConformance_Update_Grammar(t *testing.T) {
	t.Parallel()
	base := Item{"pk": s("a"), "n": n("10"), "s": s("str"), "l": l(s("l0"), s("l1"), s("l2")),
		"m": m(Item{"x": n("1"), "nest": m(Item{"y": s("why")})}), "ss": ss("a", "b", "c"), "ns": ns("1", "2"),
		"bs": bs([]byte{1}, []byte{2})}
	cases := []struct {
		name string
		expr string
		nm   map[string]string
		vals Item
		want Item // attributes changed from base; a nil value removes it
	}{
		{"SetLiteral", "SET s = :v", nil, Item{":v": s("new")}, Item{"s": s("new")}},
		{"SetPlus", "SET n = n + :d", nil, Item{":d": n("2.5")}, Item{"n": n("12.5")}},
		{"SetMinus", "SET n = n - :d", nil, Item{":d": n("11")}, Item{"n": n("-1")}},
		{"SetValuePlusPath", "SET z = :d + n", nil, Item{":d": n("1")}, Item{"z": n("11")}},
		{"SetIfNotExistsAbsent", "SET z = if_not_exists(z, :v)", nil, Item{":v": n("7")}, Item{"z": n("7")}},
		{"SetIfNotExistsPresent", "SET n = if_not_exists(n, :v)", nil, Item{":v": n("7")}, Item{}},
		{"SetIfNotExistsPlus", "SET c = if_not_exists(c, :zero) + :one", nil, Item{":zero": n("0"), ":one": n("1")}, Item{"c": n("1")}},
		{"ListAppendEnd", "SET l = list_append(l, :v)", nil, Item{":v": l(s("l3"))}, Item{"l": l(s("l0"), s("l1"), s("l2"), s("l3"))}},
		{"ListAppendFront", "SET l = list_append(:v, l)", nil, Item{":v": l(s("f"))}, Item{"l": l(s("f"), s("l0"), s("l1"), s("l2"))}},
		{"ListAppendIfNotExists", "SET nl = list_append(if_not_exists(nl, :e), :v)", nil, Item{":e": l(), ":v": l(n("1"))}, Item{"nl": l(n("1"))}},
		{"SetListIndex", "SET l[1] = :v", nil, Item{":v": s("X")}, Item{"l": l(s("l0"), s("X"), s("l2"))}},
		{"SetListIndexPastEndAppends", "SET l[10] = :v", nil, Item{":v": s("X")}, Item{"l": l(s("l0"), s("l1"), s("l2"), s("X"))}},
		{"SetNestedMap", "SET m.nest.z = :v, m.x = m.x + :one", nil, Item{":v": s("zed"), ":one": n("1")},
			Item{"m": m(Item{"x": n("2"), "nest": m(Item{"y": s("why"), "z": s("zed")})})}},
		{"SetNames", "SET #s = :v", names("#s", "s"), Item{":v": s("named")}, Item{"s": s("named")}},
		{"SetSeveral", "SET s = :v, n = :w", nil, Item{":v": s("1"), ":w": n("2")}, Item{"s": s("1"), "n": n("2")}},
		{"Remove", "REMOVE s, ns", nil, nil, Item{"s": nil, "ns": nil}},
		{"RemoveAbsentIsNoop", "REMOVE nothere", nil, nil, Item{}},
		{"RemoveListIndex", "REMOVE l[0]", nil, nil, Item{"l": l(s("l1"), s("l2"))}},
		{"RemoveNested", "REMOVE m.nest.y", nil, nil, Item{"m": m(Item{"x": n("1"), "nest": m(Item{})})}},
		{"AddNumber", "ADD n :d", nil, Item{":d": n("-3")}, Item{"n": n("7")}},
		{"AddNumberAbsent", "ADD z :d", nil, Item{":d": n("5")}, Item{"z": n("5")}},
		{"AddStringSet", "ADD ss :v", nil, Item{":v": ss("c", "d")}, Item{"ss": ss("a", "b", "c", "d")}},
		{"AddSetAbsent", "ADD zs :v", nil, Item{":v": ns("3")}, Item{"zs": ns("3")}},
		{"AddBinarySet", "ADD bs :v", nil, Item{":v": bs([]byte{3})}, Item{"bs": bs([]byte{1}, []byte{2}, []byte{3})}},
		{"DeleteFromSet", "DELETE ss :v", nil, Item{":v": ss("a", "zz")}, Item{"ss": ss("b", "c")}},
		{"DeleteNumberSet", "DELETE ns :v", nil, Item{":v": ns("2.0")}, Item{"ns": ns("1")}},
		{"DeleteLastElementsRemovesSet", "DELETE ss :v", nil, Item{":v": ss("a", "b", "c")}, Item{"ss": nil}},
		{"AllClauses", "SET s = :v REMOVE l ADD n :d DELETE ss :x", nil, Item{":v": s("v"), ":d": n("1"), ":x": ss("a")},
			Item{"s": s("v"), "l": nil, "n": n("11"), "ss": ss("b", "c")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tbl := hashTable(t)
			put(t, tbl, base)
			_, err := update(t, tbl, tc.expr, tc.nm, tc.vals, types.ReturnValueNone)
			noErr(t, err, "UpdateItem "+tc.expr)
			want := Item{}
			for k, v := range base {
				want[k] = v
			}
			for k, v := range tc.want {
				if v == nil {
					delete(want, k)
				} else {
					want[k] = v
				}
			}
			requireItem(t, want, get(t, tbl, Item{"pk": s("a")}), tc.expr)
		})
	}
}

func TestConformance_Update_CreatesMissingItem(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	_, err := update(t, tbl, "SET v = :v ADD c :one", nil, Item{":v": s("x"), ":one": n("1")}, types.ReturnValueNone)
	noErr(t, err, "UpdateItem on a missing item")
	requireItem(t, Item{"pk": s("a"), "v": s("x"), "c": n("1")}, get(t, tbl, Item{"pk": s("a")}), "upsert")
}

func TestConformance_Update_ReturnValues(t *testing.T) {
	t.Parallel()
	base := Item{"pk": s("a"), "x": n("1"), "y": s("keep"), "gone": s("g"), "m": m(Item{"a": n("1"), "b": n("2")})}
	expr := "SET x = x + :one, fresh = :f, m.a = :f REMOVE gone"
	vals := Item{":one": n("1"), ":f": s("f")}
	after := Item{"pk": s("a"), "x": n("2"), "y": s("keep"), "fresh": s("f"), "m": m(Item{"a": s("f"), "b": n("2")})}
	cases := []struct {
		rv   types.ReturnValue
		want Item
	}{
		{types.ReturnValueNone, nil},
		{types.ReturnValueAllOld, base},
		{types.ReturnValueAllNew, after},
		// UPDATED_OLD: the updated attributes as they were; an attribute that did not exist is absent; nested paths are projected.
		{types.ReturnValueUpdatedOld, Item{"x": n("1"), "gone": s("g"), "m": m(Item{"a": n("1")})}},
		// UPDATED_NEW: the updated attributes as they are now; a removed attribute is absent.
		{types.ReturnValueUpdatedNew, Item{"x": n("2"), "fresh": s("f"), "m": m(Item{"a": s("f")})}},
	}
	for _, tc := range cases {
		t.Run(string(tc.rv), func(t *testing.T) {
			t.Parallel()
			tbl := hashTable(t)
			put(t, tbl, base)
			got, err := update(t, tbl, expr, nil, vals, tc.rv)
			noErr(t, err, "UpdateItem")
			requireItem(t, tc.want, got, "ReturnValues ", tc.rv)
			requireItem(t, after, get(t, tbl, Item{"pk": s("a")}), "stored item")
		})
	}
	t.Run("ALL_OLD_OfMissingItem", func(t *testing.T) {
		t.Parallel()
		tbl := hashTable(t)
		got, err := update(t, tbl, "SET v = :v", nil, Item{":v": n("1")}, types.ReturnValueAllOld)
		noErr(t, err, "UpdateItem")
		requireItem(t, nil, got, "ALL_OLD of an item that did not exist")
	})
}

func TestConformance_Update_Conditional(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("a"), "ver": n("1")})
	c := ddb(t)
	in := func(expected string) *dynamodb.UpdateItemInput {
		return &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
			UpdateExpression: aws.String("SET ver = ver + :one"), ConditionExpression: aws.String("ver = :exp"),
			ExpressionAttributeValues: Item{":one": n("1"), ":exp": n(expected)}}
	}
	_, err := c.UpdateItem(ctx(t), in("1"))
	noErr(t, err, "UpdateItem with a true condition")
	_, err = c.UpdateItem(ctx(t), in("1"))
	requireCCF(t, err, "UpdateItem with a stale version")
	requireItem(t, Item{"pk": s("a"), "ver": n("2")}, get(t, tbl, Item{"pk": s("a")}), "only the first update applied")
}

func TestConformance_Update_Invalid(t *testing.T) {
	t.Parallel()
	base := Item{"pk": s("a"), "n": n("1"), "s": s("str"), "l": l(s("x")), "ss": ss("a"), "m": m(Item{"k": s("v")})}
	cases := []struct {
		name string
		expr string
		vals Item
	}{
		{"UpdateKeyAttribute", "SET pk = :v", Item{":v": s("b")}},
		{"OverlappingPaths", "SET n = :v REMOVE n", Item{":v": n("2")}},
		{"OverlappingParentChild", "SET m = :v, m.k = :v", Item{":v": s("v")}},
		{"PlusOnString", "SET n = s + :v", Item{":v": n("1")}},
		{"PlusOnMissingAttribute", "SET n = nothere + :v", Item{":v": n("1")}},
		{"AddToString", "ADD s :v", Item{":v": n("1")}},
		{"AddNumberToSet", "ADD ss :v", Item{":v": n("1")}},
		{"AddWrongSetType", "ADD ss :v", Item{":v": ns("1")}},
		{"AddList", "ADD l :v", Item{":v": l(s("y"))}},
		{"DeleteScalar", "DELETE s :v", Item{":v": s("str")}},
		{"ListAppendNonList", "SET l = list_append(l, :v)", Item{":v": s("y")}},
		{"NestedPathThroughScalar", "SET s.xq = :v", Item{":v": s("y")}},
		{"ParseError", "SET = :v", Item{":v": s("y")}},
		{"ClauseTwice", "SET n = :v SET s = :v", Item{":v": s("y")}},
		{"EmptySetValue", "SET z = :v", Item{":v": ss()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tbl := hashTable(t)
			put(t, tbl, base)
			_, err := update(t, tbl, tc.expr, nil, tc.vals, types.ReturnValueNone)
			requireValidation(t, err, tc.expr)
			requireItem(t, base, get(t, tbl, Item{"pk": s("a")}), "a rejected update changes nothing")
		})
	}
}
