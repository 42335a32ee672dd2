package conformance

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestConformance_Expression_Misplaced: functions and paths used where the
// expression grammar does not allow them are ValidationExceptions.
func TestConformance_Expression_Misplaced(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	num := numTable(t)
	put(t, tbl, Item{"pk": s("a"), "s": s("str"), "m": m(Item{"k": s("v")}), "l": l(s("x"))})
	c := ddb(t)
	upd := func(expr string, vals Item) error {
		in := &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")}, UpdateExpression: aws.String(expr)}
		if len(vals) > 0 {
			in.ExpressionAttributeValues = vals
		}
		_, err := c.UpdateItem(ctx(t), in)
		return err
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"IfNotExistsInCondition", func() error {
			_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: Item{"pk": s("a")},
				ConditionExpression: aws.String("if_not_exists(s, :v) = :v"), ExpressionAttributeValues: Item{":v": s("x")}})
			return err
		}},
		{"SizeInUpdate", func() error { return upd("SET n = size(s)", nil) }},
		{"AttributeExistsInUpdate", func() error { return upd("SET n = attribute_exists(s)", nil) }},
		{"SetThroughMissingMap", func() error { return upd("SET m.nothere.x = :v", Item{":v": s("y")}) }},
		{"IndexIntoScalar", func() error { return upd("SET s[0] = :v", Item{":v": s("y")}) }},
		{"IndexIntoMap", func() error { return upd("SET m[0] = :v", Item{":v": s("y")}) }},
		{"AttributeExistsInKeyCondition", func() error {
			_, err := c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(num), KeyConditionExpression: aws.String("pk = :p AND attribute_exists(sk)"),
				ExpressionAttributeValues: Item{":p": s("p")}})
			return err
		}},
		{"BeginsWithOnNumberSortKey", func() error {
			_, err := c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(num), KeyConditionExpression: aws.String("pk = :p AND begins_with(sk, :x)"),
				ExpressionAttributeValues: Item{":p": s("p"), ":x": n("1")}})
			return err
		}},
		{"KeyBetweenReversed", func() error {
			_, err := c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(num), KeyConditionExpression: aws.String("pk = :p AND sk BETWEEN :a AND :b"),
				ExpressionAttributeValues: Item{":p": s("p"), ":a": n("5"), ":b": n("1")}})
			return err
		}},
		{"TwoSortKeyConditions", func() error {
			_, err := c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(num), KeyConditionExpression: aws.String("pk = :p AND sk > :a AND sk < :b"),
				ExpressionAttributeValues: Item{":p": s("p"), ":a": n("1"), ":b": n("5")}})
			return err
		}},
		{"FilterWithUpdateSyntax", func() error {
			_, err := c.Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl), FilterExpression: aws.String("SET s = :v"), ExpressionAttributeValues: Item{":v": s("x")}})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireValidation(t, tc.call(), tc.name)
		})
	}
	requireItem(t, Item{"pk": s("a"), "s": s("str"), "m": m(Item{"k": s("v")}), "l": l(s("x"))}, get(t, tbl, Item{"pk": s("a")}), "rejected updates change nothing")
}

// TestConformance_Update_ReturnValuesSetsAndLists: UPDATED_NEW / UPDATED_OLD
// with set ADD/DELETE and list element updates.
func TestConformance_Update_ReturnValuesSetsAndLists(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("a"), "ss": ss("x"), "l": l(s("l0"), s("l1")), "keep": s("k")})
	got, err := update(t, tbl, "ADD ss :v", nil, Item{":v": ss("y")}, types.ReturnValueUpdatedNew)
	noErr(t, err, "ADD")
	requireItem(t, Item{"ss": ss("x", "y")}, got, "UPDATED_NEW after ADD to a set returns the whole set")
	got, err = update(t, tbl, "DELETE ss :v", nil, Item{":v": ss("x")}, types.ReturnValueUpdatedOld)
	noErr(t, err, "DELETE")
	requireItem(t, Item{"ss": ss("x", "y")}, got, "UPDATED_OLD after DELETE from a set")
	got, err = update(t, tbl, "SET l[1] = :v", nil, Item{":v": s("L1")}, types.ReturnValueUpdatedNew)
	noErr(t, err, "SET l[1]")
	requireItem(t, Item{"l": l(s("L1"))}, got, "UPDATED_NEW of a list element projects that element")
}
