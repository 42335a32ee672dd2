package conformance

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestConformance_UpdateTable_CreateAndDeleteGSI: UpdateTable's
// GlobalSecondaryIndexUpdates Create adds an index that is backfilled from
// the existing items (IndexStatus CREATING, then ACTIVE); Delete removes it.
func TestConformance_UpdateTable_CreateAndDeleteGSI(t *testing.T) {
	t.Parallel()
	// dynalite 4.0.0 applies only the Update action of GlobalSecondaryIndexUpdates;
	// the AWS UpdateTable reference documents Create and Delete.
	skipOnDynalite(t, "ignores GlobalSecondaryIndexUpdates Create/Delete")
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("a"), "g": s("x"), "v": n("1")}, Item{"pk": s("b"), "g": s("x"), "v": n("2")}, Item{"pk": s("c")})
	c := ddb(t)
	_, err := c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(tbl),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS}},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
			IndexName: aws.String("byg"), KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}}}})
	noErr(t, err, "UpdateTable Create GSI")
	deadline := time.Now().Add(20 * time.Second)
	for {
		d := waitActive(t, tbl)
		var st types.IndexStatus
		for _, g := range d.GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == "byg" {
				st = g.IndexStatus
			}
		}
		if st == types.IndexStatusActive {
			break
		}
		if st != types.IndexStatusCreating || time.Now().After(deadline) {
			t.Fatalf("new GSI IndexStatus = %q, want CREATING then ACTIVE", st)
		}
		sleepMs(20)
	}
	out, err := c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("byg"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: Item{":g": s("x")}})
	noErr(t, err, "Query new GSI")
	if got := fmt.Sprint(keysOf(out.Items)); got != "[S:a/<nil> S:b/<nil>]" {
		t.Fatalf("backfilled GSI holds %s, want items a and b", got)
	}
	requireItem(t, Item{"pk": s("a"), "g": s("x")}, out.Items[0], "KEYS_ONLY projection of a backfilled item")
	_, err = c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(tbl),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("byg")}}}})
	noErr(t, err, "UpdateTable Delete GSI")
	for i := 0; ; i++ {
		d := waitActive(t, tbl)
		if len(d.GlobalSecondaryIndexes) == 0 {
			break
		}
		if i > 1000 {
			t.Fatalf("deleted GSI still listed: %+v", d.GlobalSecondaryIndexes)
		}
		sleepMs(20)
	}
	_, err = c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("byg"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: Item{":g": s("x")}})
	requireValidation(t, err, "Query a deleted GSI")
}
