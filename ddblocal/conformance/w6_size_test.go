package conformance

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// TestW6_ConformanceOversizedItemIsRefusedWhateverElseIsWrong: an item over
// 400 KB (Developer Guide, "Quotas": "The maximum item size in DynamoDB is
// 400 KB") is refused with "Item size has exceeded the maximum allowed
// size" before the table is looked up and before its key is checked, in
// PutItem and in BatchWriteItem.
func TestW6_ConformanceOversizedItemIsRefusedWhateverElseIsWrong(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	c := ddb(t)
	big := s(strings.Repeat("x", 500_000))
	cases := []struct {
		name string
		call func() error
	}{
		{"PutItemToAMissingTable", func() error {
			_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl + "_missing"), Item: Item{"pk": s("a"), "big": big}})
			return err
		}},
		{"PutItemWithoutItsKey", func() error {
			_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: Item{"big": big}})
			return err
		}},
		{"BatchWriteItem", func() error {
			_, err := c.BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {
				{PutRequest: &types.PutRequest{Item: Item{"pk": s("a")}}},
				{PutRequest: &types.PutRequest{Item: Item{"pk": s("b"), "big": big}}}}}})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" || ae.ErrorMessage() != "Item size has exceeded the maximum allowed size" {
				t.Fatalf("%s: %v; want ValidationException: Item size has exceeded the maximum allowed size", tc.name, err)
			}
		})
	}
	requireItem(t, nil, get(t, tbl, Item{"pk": s("a")}), "a refused batch wrote nothing")
}

// TestW6_ConformanceBodyOver16MBIsRefused: a request body over 16 MB is
// answered 413 (BatchWriteItem API reference: "The total request size
// exceeds 16 MB" rejects the request).
func TestW6_ConformanceBodyOver16MBIsRefused(t *testing.T) {
	t.Parallel()
	// dynalite 4.0.0 answers 413 but stops reading the body, so a client
	// that sends the whole body before reading the answer (Go's) waits
	// until its deadline; while it reads the body it serves nothing else.
	skipOnDynalite(t, "stops reading a body over 16 MB, so the client never gets its 413")
	tbl := hashTable(t)
	body := []byte(`{"TableName":"` + tbl + `","Item":{"pk":{"S":"a"},"v":{"S":"` + strings.Repeat("x", 16<<20) + `"}}}`)
	status, resp := rawCall(t, "DynamoDB_20120810.PutItem", body)
	if status != 413 {
		t.Fatalf("a %d-byte body: status %d %s, want 413", len(body), status, bytes.TrimSpace(resp))
	}
}
