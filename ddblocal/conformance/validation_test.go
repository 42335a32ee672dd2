package conformance

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestConformance_Validation_ItemSize(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	// 400 KB = 409,600 bytes, counting attribute names and values.
	_, err := ddb(t).PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl),
		Item: Item{"pk": s("a"), "blob": s(strings.Repeat("x", 409_600))}})
	requireValidation(t, err, "PutItem over 400 KB")
	_, err = ddb(t).PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl),
		Item: Item{"pk": s("a"), "blob": s(strings.Repeat("x", 400_000))}})
	noErr(t, err, "PutItem just under 400 KB")
	_, err = ddb(t).UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
		UpdateExpression: aws.String("SET more = :v"), ExpressionAttributeValues: Item{":v": s(strings.Repeat("y", 10_000))}})
	requireValidation(t, err, "UpdateItem growing the item over 400 KB")
}

func TestConformance_Validation_Keys(t *testing.T) {
	t.Parallel()
	tbl := rangeTable(t, types.ScalarAttributeTypeN)
	c := ddb(t)
	puts := []struct {
		name string
		item Item
	}{
		{"HashKeyWrongType", Item{"pk": n("1"), "sk": n("1")}},
		{"RangeKeyWrongType", Item{"pk": s("a"), "sk": s("1")}},
		{"MissingRangeKey", Item{"pk": s("a")}},
		{"MissingHashKey", Item{"sk": n("1")}},
		{"EmptyStringKey", Item{"pk": s(""), "sk": n("1")}},
		{"EmptySet", Item{"pk": s("a"), "sk": n("1"), "set": ss()}},
		{"DuplicateInSet", Item{"pk": s("a"), "sk": n("1"), "set": ss("x", "x")}},
		{"NumberTooPrecise", Item{"pk": s("a"), "sk": n("1"), "v": n("1.234567890123456789012345678901234567891")}},
		{"NumberTooLarge", Item{"pk": s("a"), "sk": n("1"), "v": n("1E+126")}},
		{"NumberNotANumber", Item{"pk": s("a"), "sk": n("1"), "v": n("12abc")}},
	}
	for _, tc := range puts {
		t.Run("Put"+tc.name, func(t *testing.T) {
			_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: tc.item})
			requireValidation(t, err, "PutItem "+tc.name)
		})
	}
	gets := []struct {
		name string
		key  Item
	}{
		{"KeyWrongType", Item{"pk": s("a"), "sk": s("1")}},
		{"KeyMissingRange", Item{"pk": s("a")}},
		{"KeyExtraAttribute", Item{"pk": s("a"), "sk": n("1"), "x": s("y")}},
		{"KeyEmptyString", Item{"pk": s(""), "sk": n("1")}},
	}
	for _, tc := range gets {
		t.Run("Get"+tc.name, func(t *testing.T) {
			_, err := c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: tc.key})
			requireValidation(t, err, "GetItem "+tc.name)
			_, err = c.DeleteItem(ctx(t), &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: tc.key})
			requireValidation(t, err, "DeleteItem "+tc.name)
		})
	}
	// 38 significant digits are accepted and kept exactly; an empty non-key string is allowed.
	put(t, tbl, Item{"pk": s("a"), "sk": n("1"), "v": n("1.2345678901234567890123456789012345678"), "e": s(""), "eb": b([]byte{})})
	requireItem(t, Item{"pk": s("a"), "sk": n("1"), "v": n("1.2345678901234567890123456789012345678"), "e": s(""), "eb": b([]byte{})},
		get(t, tbl, Item{"pk": s("a"), "sk": n("1")}), "38-digit number, empty string and binary round-trip")
}

func TestConformance_Validation_ExpressionNamesAndValues(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("a"), "v": n("1")})
	c := ddb(t)
	key := Item{"pk": s("a")}
	_, err := c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key, ProjectionExpression: aws.String("v"),
		ExpressionAttributeNames: names("#unused", "x")})
	requireValidation(t, err, "unused ExpressionAttributeNames in GetItem")
	_, err = c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key, ProjectionExpression: aws.String("#undefined")})
	requireValidation(t, err, "undefined name in ProjectionExpression")
	_, err = c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key, UpdateExpression: aws.String("SET v = :v"),
		ExpressionAttributeValues: Item{":v": n("2"), ":unused": n("3")}})
	requireValidation(t, err, "unused ExpressionAttributeValues in UpdateItem")
	_, err = c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key, UpdateExpression: aws.String("SET v = :undefined")})
	requireValidation(t, err, "undefined value in UpdateExpression")
	_, err = c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key, UpdateExpression: aws.String("SET #n = :v"),
		ExpressionAttributeNames: names("#n", "v", "#m", "w"), ExpressionAttributeValues: Item{":v": n("2")}})
	requireValidation(t, err, "unused ExpressionAttributeNames in UpdateItem")
	_, err = c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: Item{":p": s("a"), ":x": n("1")}})
	requireValidation(t, err, "unused ExpressionAttributeValues in Query")
	_, err = c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: key, ExpressionAttributeValues: Item{":x": n("1")}})
	requireValidation(t, err, "ExpressionAttributeValues without an expression")
	for _, expr := range []string{"SET status = :v", "SET v = :v REMOVE name", "SET #v = size"} {
		in := &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key, UpdateExpression: aws.String(expr),
			ExpressionAttributeValues: Item{":v": n("2")}}
		if strings.Contains(expr, "#v") {
			in.ExpressionAttributeNames = names("#v", "v")
			in.ExpressionAttributeValues = nil
		}
		_, err = c.UpdateItem(ctx(t), in)
		requireValidation(t, err, "reserved word used bare: "+expr)
	}
	_, err = c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key, ProjectionExpression: aws.String("v, data")})
	requireValidation(t, err, "reserved word (DATA) in ProjectionExpression")
	_, err = c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key, UpdateExpression: aws.String("SET #s = :v"),
		ExpressionAttributeNames: names("#s", "status"), ExpressionAttributeValues: Item{":v": n("2")}})
	noErr(t, err, "reserved word through ExpressionAttributeNames")
}

func TestConformance_Validation_UnknownTable(t *testing.T) {
	t.Parallel()
	missing := aws.String(tableName(t) + "_missing")
	c := ddb(t)
	calls := map[string]func() error{
		"PutItem": func() error {
			_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: missing, Item: Item{"pk": s("a")}})
			return err
		},
		"GetItem": func() error {
			_, err := c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: missing, Key: Item{"pk": s("a")}})
			return err
		},
		"UpdateItem": func() error {
			_, err := c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: missing, Key: Item{"pk": s("a")}, UpdateExpression: aws.String("REMOVE x")})
			return err
		},
		"DeleteItem": func() error {
			_, err := c.DeleteItem(ctx(t), &dynamodb.DeleteItemInput{TableName: missing, Key: Item{"pk": s("a")}})
			return err
		},
		"Query": func() error {
			_, err := c.Query(ctx(t), &dynamodb.QueryInput{TableName: missing, KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: Item{":p": s("a")}})
			return err
		},
		"Scan": func() error {
			_, err := c.Scan(ctx(t), &dynamodb.ScanInput{TableName: missing})
			return err
		},
		"BatchWriteItem": func() error {
			_, err := c.BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{*missing: {{PutRequest: &types.PutRequest{Item: Item{"pk": s("a")}}}}}})
			return err
		},
		"UpdateTable": func() error {
			_, err := c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: missing, BillingMode: types.BillingModePayPerRequest})
			return err
		},
	}
	for name, call := range calls {
		var rnf *types.ResourceNotFoundException
		if err := call(); !errors.As(err, &rnf) {
			t.Errorf("%s on an unknown table: want ResourceNotFoundException, got %v", name, err)
		}
	}
}
