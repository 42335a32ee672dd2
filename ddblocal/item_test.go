package ddblocal

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestItem_PutGetDeleteWithConditions(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "items", true)
	item := map[string]types.AttributeValue{"pk": s("a"), "sk": s("1"), "n": n("1.50")}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("items"), Item: item,
		ConditionExpression: aws.String("attribute_not_exists(pk)")}); err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("items"), Item: item,
		ConditionExpression:                 aws.String("attribute_not_exists(pk)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("second PutItem: want ConditionalCheckFailedException, got %v", err)
	}
	if got := ccf.Item["n"]; got == nil || got.(*types.AttributeValueMemberN).Value != "1.5" {
		t.Fatalf("ConditionalCheckFailedException.Item n = %#v, want 1.5", got)
	}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("items"), Key: map[string]types.AttributeValue{"pk": s("a"), "sk": s("1")}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	if v := out.Item["n"].(*types.AttributeValueMemberN).Value; v != "1.5" {
		t.Fatalf("n = %q, want normalized 1.5", v)
	}
	del, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("items"), Key: map[string]types.AttributeValue{"pk": s("a"), "sk": s("1")},
		ConditionExpression: aws.String("n = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": n("1.5")}, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		t.Fatalf("DeleteItem: %v", err)
	}
	if del.Attributes["pk"] == nil {
		t.Fatalf("DeleteItem ALL_OLD returned %v", del.Attributes)
	}
	out, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("items"), Key: map[string]types.AttributeValue{"pk": s("a"), "sk": s("1")}})
	if err != nil || out.Item != nil {
		t.Fatalf("GetItem after delete: %v %v", out.Item, err)
	}
}

func TestItem_ValidationMessages(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "val", false)
	cases := []struct {
		name string
		item map[string]types.AttributeValue
		want string
	}{
		{"type mismatch", map[string]types.AttributeValue{"pk": n("1")}, "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"},
		{"missing key", map[string]types.AttributeValue{"x": n("1")}, "One or more parameter values were invalid: Missing the key pk in the item"},
		{"empty key", map[string]types.AttributeValue{"pk": s("")}, "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: pk"},
	}
	for _, tc := range cases {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("val"), Item: tc.item})
		var ve interface{ ErrorMessage() string }
		if !errors.As(err, &ve) || ve.ErrorMessage() != tc.want {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("nope"), Key: map[string]types.AttributeValue{"pk": s("a")}})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("unknown table: %v", err)
	}
}
