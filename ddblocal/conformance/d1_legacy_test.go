package conformance

import (
	"errors"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// The legacy parameters (Expected, ConditionalOperator, AttributeUpdates,
// KeyConditions, QueryFilter, ScanFilter, AttributesToGet), as the AWS API
// reference's "Legacy conditional parameters" describe them.

// requireMessage fails unless err is a ValidationException with msg.
func requireMessage(t testing.TB, err error, msg, what string) {
	t.Helper()
	requireValidation(t, err, what)
	if got := apiMessage(err); got != msg {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, msg)
	}
}

func apiMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorMessage()
	}
	return ""
}

// TestConformance_Legacy_Expected: Expected makes a write conditional:
// Exists false is attribute_not_exists, a Value alone equality, a
// ComparisonOperator with its AttributeValueList the operator's test;
// ConditionalOperator OR needs only one to hold.
func TestConformance_Legacy_Expected(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	c := ddb(t)
	putIf := func(it Item, exp map[string]types.ExpectedAttributeValue, op types.ConditionalOperator) error {
		_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: it, Expected: exp, ConditionalOperator: op})
		return err
	}
	noErr(t, putIf(Item{"pk": s("a"), "n": n("1")}, map[string]types.ExpectedAttributeValue{"pk": {Exists: aws.Bool(false)}}, ""), "put if absent")
	requireCCF(t, putIf(Item{"pk": s("a"), "n": n("9")}, map[string]types.ExpectedAttributeValue{"pk": {Exists: aws.Bool(false)}}, ""), "put if absent, present")
	noErr(t, putIf(Item{"pk": s("a"), "n": n("2")}, map[string]types.ExpectedAttributeValue{"n": {Value: n("1")}}, ""), "put if n = 1")
	requireCCF(t, putIf(Item{"pk": s("a"), "n": n("3")}, map[string]types.ExpectedAttributeValue{"n": {Value: n("1")}}, ""), "put if n = 1, n is 2")
	noErr(t, putIf(Item{"pk": s("a"), "n": n("3")}, map[string]types.ExpectedAttributeValue{
		"n": {ComparisonOperator: types.ComparisonOperatorBetween, AttributeValueList: []types.AttributeValue{n("1"), n("2")}}}, ""), "put if n BETWEEN 1 AND 2")
	cond := map[string]types.ExpectedAttributeValue{
		"n": {ComparisonOperator: types.ComparisonOperatorGt, AttributeValueList: []types.AttributeValue{n("100")}},
		"x": {ComparisonOperator: types.ComparisonOperatorNull},
	}
	requireCCF(t, putIf(Item{"pk": s("a"), "n": n("4")}, cond, types.ConditionalOperatorAnd), "AND of a false and a true condition")
	if tgt.name == "dynalite" {
		// dynalite 4.0.0 gives an OR up at its first false condition, and
		// the SDK sends Expected (a map) in random order: its answer would
		// depend on the order (see OrFilter below). The item as the OR
		// would leave it, for the rest of the test.
		put(t, tbl, Item{"pk": s("a"), "n": n("4")})
	} else {
		noErr(t, putIf(Item{"pk": s("a"), "n": n("4")}, cond, types.ConditionalOperatorOr), "OR of a false and a true condition")
	}
	out, err := c.DeleteItem(ctx(t), &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
		Expected:     map[string]types.ExpectedAttributeValue{"n": {ComparisonOperator: types.ComparisonOperatorIn, AttributeValueList: []types.AttributeValue{n("3"), n("4")}}},
		ReturnValues: types.ReturnValueAllOld})
	noErr(t, err, "delete if n IN (3, 4)")
	requireItem(t, Item{"pk": s("a"), "n": n("4")}, out.Attributes, "DeleteItem ALL_OLD")
}

// TestConformance_Legacy_AttributeUpdates: PUT sets, DELETE without a
// value removes, DELETE with a set removes its members, ADD adds to a
// number, unites sets and appends to a list; ReturnValues UPDATED_NEW
// names the attributes updated.
func TestConformance_Legacy_AttributeUpdates(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("a"), "n": n("5"), "gone": s("x"), "tags": ss("a", "b", "c"), "l": l(n("1"))})
	c := ddb(t)
	out, err := c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
		AttributeUpdates: map[string]types.AttributeValueUpdate{
			"n":    {Action: types.AttributeActionAdd, Value: n("2.5")},
			"gone": {Action: types.AttributeActionDelete},
			"tags": {Action: types.AttributeActionDelete, Value: ss("b")},
			"l":    {Action: types.AttributeActionAdd, Value: l(n("2"), n("3"))},
			"new":  {Action: types.AttributeActionPut, Value: s("v")},
			"more": {Action: types.AttributeActionAdd, Value: ns("7")},
		}, ReturnValues: types.ReturnValueAllNew})
	noErr(t, err, "UpdateItem AttributeUpdates")
	requireItem(t, Item{"pk": s("a"), "n": n("7.5"), "tags": ss("a", "c"), "l": l(n("1"), n("2"), n("3")), "new": s("v"), "more": ns("7")},
		out.Attributes, "item after AttributeUpdates")
	_, err = c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
		AttributeUpdates: map[string]types.AttributeValueUpdate{"new": {Action: types.AttributeActionAdd, Value: n("1")}}})
	requireMessage(t, err, "Type mismatch for attribute to update", "ADD of a number to a string")
	_, err = c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
		AttributeUpdates: map[string]types.AttributeValueUpdate{"x": {Action: types.AttributeActionPut}}})
	requireMessage(t, err, "One or more parameter values were invalid: Only DELETE action is allowed when no attribute value is specified", "PUT without a value")
}

// TestConformance_Legacy_KeyConditionsAndFilters: KeyConditions select a
// Query's items, QueryFilter and ScanFilter filter them,
// ConditionalOperator joins the filters, AttributesToGet projects.
func TestConformance_Legacy_KeyConditionsAndFilters(t *testing.T) {
	t.Parallel()
	tbl := rangeTable(t, types.ScalarAttributeTypeN)
	for i, v := range []string{"x", "y", "x", "z"} {
		put(t, tbl, Item{"pk": s("p"), "sk": n(strconv.Itoa(i + 1)), "v": s(v), "w": n(strconv.Itoa(i * 10))})
	}
	c := ddb(t)
	t.Run("OrFilter", func(t *testing.T) {
		// The API reference (ConditionalOperator): with OR, at least one
		// of the conditions must hold; dynalite 4.0.0 (db/index.js
		// matchesFilter) gives up at the first that does not.
		skipOnDynalite(t, "fails an OR filter at its first false condition")
		queryOrFilter(t, c, tbl)
	})
	items, _ := scanAll(t, dynamodb.ScanInput{TableName: aws.String(tbl),
		ScanFilter: map[string]types.Condition{"v": {ComparisonOperator: types.ComparisonOperatorNe, AttributeValueList: []types.AttributeValue{s("x")}}}})
	if got := len(items); got != 2 {
		t.Fatalf("ScanFilter v NE x: %d items, want 2", got)
	}
	_, err := c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(tbl),
		KeyConditions: map[string]types.Condition{"pk": {ComparisonOperator: types.ComparisonOperatorBeginsWith, AttributeValueList: []types.AttributeValue{s("p")}}}})
	requireMessage(t, err, "Query key condition not supported", "BEGINS_WITH on the hash key")
	_, err = c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(tbl),
		KeyConditions: map[string]types.Condition{"pk": {ComparisonOperator: types.ComparisonOperatorEq, AttributeValueList: []types.AttributeValue{s("p")}}},
		QueryFilter:   map[string]types.Condition{"sk": {ComparisonOperator: types.ComparisonOperatorNotNull}}})
	requireMessage(t, err, "QueryFilter can only contain non-primary key attributes: Primary key attribute: sk", "QueryFilter on the range key")
}

// queryOrFilter queries sk 2..4 of tbl with a QueryFilter joined by OR.
func queryOrFilter(t *testing.T, c *dynamodb.Client, tbl string) {
	out, err := c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(tbl),
		KeyConditions: map[string]types.Condition{
			"pk": {ComparisonOperator: types.ComparisonOperatorEq, AttributeValueList: []types.AttributeValue{s("p")}},
			"sk": {ComparisonOperator: types.ComparisonOperatorBetween, AttributeValueList: []types.AttributeValue{n("2"), n("4")}},
		},
		QueryFilter: map[string]types.Condition{
			"v": {ComparisonOperator: types.ComparisonOperatorEq, AttributeValueList: []types.AttributeValue{s("x")}},
			"w": {ComparisonOperator: types.ComparisonOperatorGe, AttributeValueList: []types.AttributeValue{n("30")}},
		},
		ConditionalOperator: types.ConditionalOperatorOr,
		AttributesToGet:     []string{"sk", "v"},
	})
	noErr(t, err, "Query KeyConditions QueryFilter")
	requireItems(t, []Item{{"sk": n("3"), "v": s("x")}, {"sk": n("4"), "v": s("z")}}, out.Items, "Query items")
	if out.ScannedCount != 3 {
		t.Fatalf("ScannedCount %d, want 3 (sk 2..4 before the filter)", out.ScannedCount)
	}
}

// TestConformance_Legacy_Validation: the legacy parameters' own checks,
// and their mixing with expressions, in DynamoDB's words.
func TestConformance_Legacy_Validation(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	c := ddb(t)
	key := Item{"pk": s("a")}
	_, err := c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key,
		AttributesToGet: []string{"pk"}, ProjectionExpression: aws.String("pk")})
	requireMessage(t, err, "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}", "AttributesToGet with ProjectionExpression")
	_, err = c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: key, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		Expected: map[string]types.ExpectedAttributeValue{"pk": {Exists: aws.Bool(false)}}})
	requireMessage(t, err, "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}", "Expected with ConditionExpression")
	_, err = c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: key,
		Expected: map[string]types.ExpectedAttributeValue{"n": {Value: n("1"), AttributeValueList: []types.AttributeValue{n("1")}}}})
	requireMessage(t, err, "One or more parameter values were invalid: Value and AttributeValueList cannot be used together for Attribute: n", "Value with AttributeValueList")
	_, err = c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: key,
		Expected: map[string]types.ExpectedAttributeValue{"n": {Exists: aws.Bool(true)}}})
	requireMessage(t, err, "One or more parameter values were invalid: Value must be provided when Exists is true for Attribute: n", "Exists true without a Value")
	_, err = c.Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl),
		ScanFilter: map[string]types.Condition{"n": {ComparisonOperator: types.ComparisonOperatorBetween, AttributeValueList: []types.AttributeValue{n("1")}}}})
	requireMessage(t, err, "One or more parameter values were invalid: Invalid number of argument(s) for the BETWEEN ComparisonOperator", "BETWEEN with one value")
	_, err = c.Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl),
		ScanFilter: map[string]types.Condition{"n": {ComparisonOperator: types.ComparisonOperatorLt, AttributeValueList: []types.AttributeValue{bl(true)}}}})
	requireMessage(t, err, "One or more parameter values were invalid: ComparisonOperator LT is not valid for BOOL AttributeValue type", "LT of a BOOL")
}
