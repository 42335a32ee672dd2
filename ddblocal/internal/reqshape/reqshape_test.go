package reqshape

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

func message(t *testing.T, err error) string {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is not an *apierr.Error", err)
	}
	return ae.Code + ": " + ae.Message
}

// TestD1_WalkListsConstraintFailuresInDynamoDBsOrder: the constraints of
// the API model fail in the order DynamoDB lists them, every failure of
// the request in one message, at most ten.
func TestD1_WalkListsConstraintFailuresInDynamoDBsOrder(t *testing.T) {
	cases := []struct{ op, body, want string }{
		{"GetItem", `{"TableName": "a;", "ReturnConsumedCapacity": "hi", "AttributesToGet": []}`,
			"ValidationException: 5 validation errors detected: Value 'hi' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]; " +
				"Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1; " +
				"Value 'a;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; " +
				"Value 'a;' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3; " +
				"Value null at 'key' failed to satisfy constraint: Member must not be null"},
		{"CreateTable", `{"TableName": "abc", "AttributeDefinitions": [], "KeySchema": [{"AttributeName": "a", "KeyType": "X"}], "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 1}}`,
			"ValidationException: 2 validation errors detected: Value '0' at 'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: Member must have value greater than or equal to 1; " +
				"Value 'X' at 'keySchema.1.member.keyType' failed to satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]"},
		{"BatchWriteItem", `{"RequestItems": {"ab": []}}`,
			"ValidationException: 2 validation errors detected: Value '{ab=[]}' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: [Member must have length less than or equal to 255, Member must have length greater than or equal to 3, Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]; " +
				"Value '{ab=[]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]"},
		{"DescribeTable", `{"TableName": "ab"}`, "ValidationException: TableName must be at least 3 characters long and at most 255 characters long"},
		{"DescribeTable", `{}`, "ValidationException: The parameter 'TableName' is required but was not present in the request"},
		{"GetItem", `{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/t", "Key": {}}`, ""},
	}
	for _, tc := range cases {
		r, err := Walk(context.Background(), []byte(tc.body), Ops[tc.op], 0)
		if err != nil || r.Serialization || r.Convert {
			t.Fatalf("%s %s: Walk: %+v, %v", tc.op, tc.body, r, err)
		}
		got := ""
		if e := r.Err(); e != nil {
			got = message(t, e)
		}
		if got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.op, tc.body, got, tc.want)
		}
	}
}

// TestD1_NormalizeWordsTypeErrorsAsDynamoDB: a member of the wrong JSON
// type, attribute values included, is DynamoDB's SerializationException,
// the first in the shape's order.
func TestD1_NormalizeWordsTypeErrorsAsDynamoDB(t *testing.T) {
	cases := []struct{ op, body, want string }{
		{"GetItem", `{"TableName": false}`, "FALSE_VALUE cannot be converted to String"},
		{"Scan", `{"TableName": "abc", "Limit": true}`, "TRUE_VALUE cannot be converted to Integer"},
		{"CreateTable", `{"ProvisionedThroughput": {"ReadCapacityUnits": "1"}}`, "STRING_VALUE cannot be converted to Long"},
		{"GetItem", `{"AttributesToGet": {}}`, "Start of structure or map found where not expected"},
		{"GetItem", `{"ExpressionAttributeNames": []}`, "Unrecognized collection type java.util.Map<java.lang.String, java.lang.String>"},
		{"BatchWriteItem", `{"RequestItems": {"abc": 1}}`, "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and java.lang.Class are in module java.base of loader 'bootstrap')"},
		{"CreateTable", `{"KeySchema": [1]}`, "Unexpected value type in payload"},
		{"CreateTable", `{"ProvisionedThroughput": []}`, "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.ProvisionedThroughput"},
		{"PutItem", `{"Item": {"a": {"L": [{"N": 1}]}}}`, "NUMBER_VALUE cannot be converted to String"},
		{"PutItem", `{"Item": {"a": {"BS": ["YR=="]}}}`, "Invalid last non-pad Base64 character dectected"},
		{"PutItem", `{"Item": {"a": {"M": []}}}`, "Unrecognized collection type java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>"},
		{"PutItem", `{"Item": {"a": {"BOOL": "maybe"}}}`, "Unexpected token received from parser"},
		{"PutItem", `{"ReturnValues": 5, "Item": {"a": {"S": 5}}}`, "NUMBER_VALUE cannot be converted to String"},
	}
	for _, tc := range cases {
		_, err := Normalize([]byte(tc.body), Ops[tc.op])
		if err == nil {
			t.Errorf("%s %s: no error, want %q", tc.op, tc.body, tc.want)
			continue
		}
		if got := message(t, err); got != "SerializationException: "+tc.want {
			t.Errorf("%s %s:\n got %s\nwant SerializationException: %s", tc.op, tc.body, got, tc.want)
		}
	}
}

// TestD1_NormalizeConvertsAsDynamoDB: strings for Booleans and decimals
// for Integers become what DynamoDB reads them as; unknown and null
// members are dropped.
func TestD1_NormalizeConvertsAsDynamoDB(t *testing.T) {
	body := `{"TableName": "abc", "Limit": 2.9, "ConsistentRead": "YES", "Unknown": 1, "IndexName": null, "ExclusiveStartKey": {"a": {"NULL": "no", "X": 1}}}`
	r, err := Walk(context.Background(), []byte(body), Ops["Scan"], 0)
	if err != nil || !r.Convert || r.Serialization {
		t.Fatalf("Walk: %+v, %v; want Convert", r, err)
	}
	out, err := Normalize([]byte(body), Ops["Scan"])
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"TableName":"abc","Limit":2,"ExclusiveStartKey":{"a":{"NULL":false}},"ConsistentRead":true}`
	if string(out) != want {
		t.Fatalf("Normalize:\n got %s\nwant %s", out, want)
	}
}

// TestW6_WalkCountsMembersOutsideAttributeValues: a request with more
// list elements and map members outside its attribute values than
// allowed is refused; attribute values do not count.
func TestW6_WalkCountsMembersOutsideAttributeValues(t *testing.T) {
	many := `{"TableName": "abc", "AttributesToGet": [` + strings.TrimSuffix(strings.Repeat(`"a",`, 50), ",") + `]}`
	if _, err := Walk(context.Background(), []byte(many), Ops["GetItem"], 40); !errors.Is(err, ErrTooMany) {
		t.Fatalf("50 AttributesToGet past a limit of 40: %v, want ErrTooMany", err)
	}
	item := `{"TableName": "abc", "Item": {"l": {"L": [` + strings.TrimSuffix(strings.Repeat(`{"S": "a"},`, 500), ",") + `]}}}`
	if _, err := Walk(context.Background(), []byte(item), Ops["PutItem"], 40); err != nil {
		t.Fatalf("a 500-element list in an item under a limit of 40: %v, want no error", err)
	}
	if _, err := Walk(context.Background(), []byte(many), nil, 40); !errors.Is(err, ErrTooMany) {
		t.Fatalf("without a shape: %v, want ErrTooMany", err)
	}
}
