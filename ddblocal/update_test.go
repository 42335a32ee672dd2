package ddblocal

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestUpdate_ReturnValuesAndKeyGuard(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "upd", false)
	key := map[string]types.AttributeValue{"pk": s("a")}
	upd := func(expr string, rv types.ReturnValue, vals map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
		out, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("upd"), Key: key, UpdateExpression: aws.String(expr),
			ExpressionAttributeValues: vals, ReturnValues: rv})
		if err != nil {
			return nil, err
		}
		return out.Attributes, nil
	}
	got, err := upd("SET a = :one, b = :two", types.ReturnValueAllNew, map[string]types.AttributeValue{":one": n("1"), ":two": n("2")})
	if err != nil || len(got) != 3 || got["pk"] == nil {
		t.Fatalf("ALL_NEW = %v, %v", got, err)
	}
	got, err = upd("SET a = a + :one", types.ReturnValueUpdatedOld, map[string]types.AttributeValue{":one": n("1")})
	if err != nil || len(got) != 1 || got["a"].(*types.AttributeValueMemberN).Value != "1" {
		t.Fatalf("UPDATED_OLD = %v, %v", got, err)
	}
	got, err = upd("ADD a :one REMOVE b", types.ReturnValueUpdatedNew, map[string]types.AttributeValue{":one": n("0.5")})
	if err != nil || len(got) != 1 || got["a"].(*types.AttributeValueMemberN).Value != "2.5" {
		t.Fatalf("UPDATED_NEW = %v, %v", got, err)
	}
	_, err = upd("SET big = :b", types.ReturnValueNone, map[string]types.AttributeValue{":b": s(strings.Repeat("x", 400*1024))})
	var big interface{ ErrorMessage() string }
	if !errors.As(err, &big) || big.ErrorMessage() != "Item size to update has exceeded the maximum allowed size" {
		t.Fatalf("oversized update: %v", err)
	}
	_, err = upd("SET pk = :x", types.ReturnValueNone, map[string]types.AttributeValue{":x": s("b")})
	var ve interface{ ErrorMessage() string }
	if !errors.As(err, &ve) || ve.ErrorMessage() != "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key" {
		t.Fatalf("updating the key: %v", err)
	}
	_, err = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("upd"), Key: key, UpdateExpression: aws.String("SET a = :v"),
		ConditionExpression: aws.String("a = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": n("99")},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) || ccf.Item["a"] == nil {
		t.Fatalf("failed condition: %v", err)
	}
}
