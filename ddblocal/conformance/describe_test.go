package conformance

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestConformance_TableLifecycle_StatusInResponses: CreateTable answers
// CREATING, UpdateTable UPDATING and DeleteTable DELETING (API reference:
// each is asynchronous and "immediately returns" that status).
func TestConformance_TableLifecycle_StatusInResponses(t *testing.T) {
	t.Parallel()
	c := ddb(t)
	ks, ad := keySchema("")
	name := tableName(t)
	out, err := c.CreateTable(ctx(t), &dynamodb.CreateTableInput{TableName: aws.String(name), KeySchema: ks, AttributeDefinitions: ad,
		BillingMode: types.BillingModePayPerRequest})
	noErr(t, err, "CreateTable")
	t.Cleanup(func() { _, _ = c.DeleteTable(ctx(t), &dynamodb.DeleteTableInput{TableName: aws.String(name)}) })
	if out.TableDescription.TableStatus != types.TableStatusCreating {
		t.Errorf("CreateTable answered TableStatus %s, want CREATING", out.TableDescription.TableStatus)
	}
	d := waitActive(t, name)
	if d.CreationDateTime == nil || d.ItemCount == nil || d.TableSizeBytes == nil || d.TableId == nil {
		t.Errorf("DescribeTable lacks CreationDateTime/ItemCount/TableSizeBytes/TableId: %+v", d)
	}
	if d.BillingModeSummary == nil || d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("BillingModeSummary = %+v, want PAY_PER_REQUEST", d.BillingModeSummary)
	}
	u, err := c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(name), BillingMode: types.BillingModeProvisioned,
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(5), WriteCapacityUnits: aws.Int64(5)}})
	noErr(t, err, "UpdateTable billing mode")
	if u.TableDescription.TableStatus != types.TableStatusUpdating {
		t.Errorf("UpdateTable answered TableStatus %s, want UPDATING", u.TableDescription.TableStatus)
	}
	d = waitActive(t, name)
	if d.ProvisionedThroughput == nil || aws.ToInt64(d.ProvisionedThroughput.ReadCapacityUnits) != 5 {
		t.Errorf("after UpdateTable ProvisionedThroughput = %+v, want 5/5", d.ProvisionedThroughput)
	}
	del, err := c.DeleteTable(ctx(t), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	noErr(t, err, "DeleteTable")
	if del.TableDescription.TableStatus != types.TableStatusDeleting {
		t.Errorf("DeleteTable answered TableStatus %s, want DELETING", del.TableDescription.TableStatus)
	}
}
