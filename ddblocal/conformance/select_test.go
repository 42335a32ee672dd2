package conformance

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestConformance_Query_SelectModes(t *testing.T) {
	t.Parallel()
	tbl := indexedTable(t)
	full := Item{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("1"), "extra": s("e"), "other": s("o")}
	put(t, tbl, full)
	q := func(index string, sel types.Select, proj string) (*dynamodb.QueryOutput, error) {
		in := &dynamodb.QueryInput{TableName: aws.String(tbl), Select: sel, KeyConditionExpression: aws.String("gpk = :g"),
			ExpressionAttributeValues: Item{":g": s("g")}}
		if index != "" {
			in.IndexName = aws.String(index)
		} else {
			in.KeyConditionExpression = aws.String("pk = :g")
			in.ExpressionAttributeValues = Item{":g": s("a")}
		}
		if proj != "" {
			in.ProjectionExpression = aws.String(proj)
		}
		return ddb(t).Query(ctx(t), in)
	}
	out, err := q("", types.SelectAllAttributes, "")
	noErr(t, err, "ALL_ATTRIBUTES")
	requireItems(t, []Item{full}, out.Items, "Select ALL_ATTRIBUTES on the table")
	out, err = q("gsi_incl", types.SelectAllProjectedAttributes, "")
	noErr(t, err, "ALL_PROJECTED_ATTRIBUTES")
	requireItems(t, []Item{{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("1"), "extra": s("e")}}, out.Items, "ALL_PROJECTED_ATTRIBUTES on an INCLUDE GSI")
	out, err = q("gsi_all", types.SelectSpecificAttributes, "extra")
	noErr(t, err, "SPECIFIC_ATTRIBUTES")
	requireItems(t, []Item{{"extra": s("e")}}, out.Items, "SPECIFIC_ATTRIBUTES with ProjectionExpression")
	_, err = q("gsi_keys", types.SelectAllAttributes, "")
	requireValidation(t, err, "ALL_ATTRIBUTES on a KEYS_ONLY GSI")
	// AWS Query reference: with a ProjectionExpression, Select can only be
	// SPECIFIC_ATTRIBUTES; dynalite 4.0.0 accepts COUNT and ALL_ATTRIBUTES with one.
	skipOnDynalite(t, "accepts Select COUNT / ALL_ATTRIBUTES with a ProjectionExpression")
	_, err = q("", types.SelectAllAttributes, "extra")
	requireValidation(t, err, "Select ALL_ATTRIBUTES with a ProjectionExpression")
	_, err = q("", types.SelectCount, "extra")
	requireValidation(t, err, "Select COUNT with a ProjectionExpression")
}

func TestConformance_Transact_Limits(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	tbl := hashTable(t)
	_, err := ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{}})
	requireValidation(t, err, "TransactWriteItems with no items")
	var gets []types.TransactGetItem
	for i := 0; i < 101; i++ {
		gets = append(gets, types.TransactGetItem{Get: &types.Get{TableName: aws.String(tbl), Key: Item{"pk": s(string(rune('a'+i%26)) + string(rune('a'+i/26)))}}})
	}
	_, err = ddb(t).TransactGetItems(ctx(t), &dynamodb.TransactGetItemsInput{TransactItems: gets})
	requireValidation(t, err, "TransactGetItems with 101 items")
	_, err = ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(tbl), Item: Item{"pk": s("a")}}, Delete: &types.Delete{TableName: aws.String(tbl), Key: Item{"pk": s("b")}}},
	}})
	requireValidation(t, err, "a TransactWriteItem holding two operations")
	_, err = ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: aws.String(tbl), Key: Item{"pk": s("a")}, UpdateExpression: aws.String("SET pk = :v"), ExpressionAttributeValues: Item{":v": s("b")}}},
	}})
	requireValidation(t, err, "a transactional update of a key attribute")
}
