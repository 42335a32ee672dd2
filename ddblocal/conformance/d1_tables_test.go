package conformance

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynafold/dynafold/ddblocal"
)

// TestConformance_UpdateTable_RefusedChangesNothing: UpdateTable refuses
// throughput on a PAY_PER_REQUEST table and an Update of an index the
// table does not have, and a refused UpdateTable leaves the table as it
// was.
func TestConformance_UpdateTable_RefusedChangesNothing(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	c := ddb(t)
	_, err := c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(tbl),
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(1), WriteCapacityUnits: aws.Int64(1)}})
	requireMessage(t, err, "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST", "throughput on a PAY_PER_REQUEST table")
	// dynalite 4.0.0 ignores an Update of an index that does not exist
	// (actions/updateTable.js); DynamoDB refuses it.
	if tgt.name != "dynalite" {
		_, err = c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(tbl), BillingMode: types.BillingModeProvisioned,
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(1), WriteCapacityUnits: aws.Int64(1)},
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Update: &types.UpdateGlobalSecondaryIndexAction{IndexName: aws.String("nosuch"),
				ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(1), WriteCapacityUnits: aws.Int64(1)}}}}})
		requireCode(t, err, "ResourceNotFoundException", "Update of an index that does not exist")
	}
	d := waitActive(t, tbl)
	if d.BillingModeSummary == nil || d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Fatalf("after refused updates BillingModeSummary = %+v, want PAY_PER_REQUEST unchanged", d.BillingModeSummary)
	}
}

// TestConformance_TableLifecycleLocal_Transitions: with a table delay, a
// table is CREATING (reads and writes ResourceNotFoundException, DeleteTable
// ResourceInUseException), then ACTIVE; UPDATING after UpdateTable, a new
// index CREATING (unreadable); DELETING after DeleteTable (described and
// listed, not readable), then gone. The clock is the test's.
func TestConformance_TableLifecycleLocal_Transitions(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	srv := startOwnLocal(t, ddblocal.Options{TTLInterval: -1, Now: clock.Now, TableDelay: 500 * time.Millisecond})
	c := ddbAt(srv.Endpoint())
	name := tableName(t)
	ks, ad := keySchema("")
	_, err := c.CreateTable(ctx(t), &dynamodb.CreateTableInput{TableName: aws.String(name), KeySchema: ks, AttributeDefinitions: ad,
		BillingMode: types.BillingModePayPerRequest})
	noErr(t, err, "CreateTable")
	status := func() types.TableStatus {
		out, err := c.DescribeTable(ctx(t), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		noErr(t, err, "DescribeTable")
		return out.Table.TableStatus
	}
	if st := status(); st != types.TableStatusCreating {
		t.Fatalf("TableStatus %s right after CreateTable, want CREATING", st)
	}
	_, err = c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(name), Item: Item{"pk": s("a")}})
	requireCode(t, err, "ResourceNotFoundException", "PutItem on a CREATING table")
	_, err = c.DeleteTable(ctx(t), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	requireCode(t, err, "ResourceInUseException", "DeleteTable of a CREATING table")
	clock.Advance(500 * time.Millisecond)
	if st := status(); st != types.TableStatusActive {
		t.Fatalf("TableStatus %s after the delay, want ACTIVE", st)
	}
	_, err = c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(name), Item: Item{"pk": s("a"), "g": s("x")}})
	noErr(t, err, "PutItem on the ACTIVE table")
	_, err = c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS}},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{IndexName: aws.String("byg"),
			KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}}, Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}}})
	noErr(t, err, "UpdateTable create an index")
	if st := status(); st != types.TableStatusUpdating {
		t.Fatalf("TableStatus %s after UpdateTable, want UPDATING", st)
	}
	_, err = c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(name), IndexName: aws.String("byg"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: Item{":g": s("x")}})
	requireMessage(t, err, "Cannot read from backfilling global secondary index: byg", "Query of an index being created")
	_, err = c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(name), Key: Item{"pk": s("a")}})
	noErr(t, err, "GetItem on an UPDATING table")
	clock.Advance(500 * time.Millisecond)
	out, err := c.Query(ctx(t), &dynamodb.QueryInput{TableName: aws.String(name), IndexName: aws.String("byg"),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: Item{":g": s("x")}})
	noErr(t, err, "Query of the index once ACTIVE")
	if out.Count != 1 {
		t.Fatalf("index holds %d items, want 1", out.Count)
	}
	del, err := c.DeleteTable(ctx(t), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	noErr(t, err, "DeleteTable")
	if del.TableDescription.TableStatus != types.TableStatusDeleting || del.TableDescription.GlobalSecondaryIndexes != nil {
		t.Fatalf("DeleteTable answered %s with indexes %v, want DELETING without indexes", del.TableDescription.TableStatus, del.TableDescription.GlobalSecondaryIndexes)
	}
	if st := status(); st != types.TableStatusDeleting {
		t.Fatalf("TableStatus %s after DeleteTable, want DELETING", st)
	}
	_, err = c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(name), Key: Item{"pk": s("a")}})
	requireCode(t, err, "ResourceNotFoundException", "GetItem on a DELETING table")
	clock.Advance(500 * time.Millisecond)
	_, err = c.DescribeTable(ctx(t), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("DescribeTable after the delay: %v, want ResourceNotFoundException", err)
	}
}

// TestConformance_Scan_SegmentsAsDynamoDB: an item lands in the segment
// and the place in Scan order it has in DynamoDB (keys and segments from
// dynalite's tests, which ran against DynamoDB).
func TestConformance_Scan_SegmentsAsDynamoDB(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	for _, k := range []string{"3635", "228", "1668", "3435"} {
		put(t, tbl, Item{"pk": s(k)})
	}
	segment := func(table string, seg int32) []string {
		items, _ := scanAll(t, dynamodb.ScanInput{TableName: aws.String(table), Segment: aws.Int32(seg), TotalSegments: aws.Int32(4096)})
		return keysOf(items)
	}
	for seg, want := range map[int32]string{0: "[S:228/<nil> S:3635/<nil>]", 1: "[S:1668/<nil>]", 4: "[S:3435/<nil>]"} {
		if got := segment(tbl, seg); fmtKeys(got) != want {
			t.Errorf("segment %d of 4096 holds %v, want %s", seg, got, want)
		}
	}
	nt := createTable(t, &dynamodb.CreateTableInput{KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeN}}})
	put(t, nt, Item{"pk": n("251")}, Item{"pk": n("2388")})
	if got := segment(nt, 1); fmtKeys(got) != "[N:251/<nil>]" {
		t.Errorf("segment 1 of 4096 holds %v, want N 251", got)
	}
	if got := segment(nt, 4095); fmtKeys(got) != "[N:2388/<nil>]" {
		t.Errorf("segment 4095 of 4096 holds %v, want N 2388", got)
	}
	ot := hashTable(t)
	keys := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "aardman", "hello", "zapf", "äáöü"}
	for _, k := range keys {
		put(t, ot, Item{"pk": s(k)})
	}
	items, _ := scanAll(t, dynamodb.ScanInput{TableName: aws.String(ot)})
	var got []string
	for _, it := range items {
		got = append(got, it["pk"].(*types.AttributeValueMemberS).Value)
	}
	want := []string{"2", "8", "9", "1", "6", "hello", "0", "5", "4", "äáöü", "aardman", "7", "3", "zapf"}
	if fmtKeys(got) != fmtKeys(want) {
		t.Fatalf("Scan order %v, want DynamoDB's %v", got, want)
	}
}

func fmtKeys(keys []string) string {
	out := "["
	for i, k := range keys {
		if i > 0 {
			out += " "
		}
		out += k
	}
	return out + "]"
}
