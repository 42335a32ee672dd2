package conformance

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/dynafold/dynafold/ddblocal"
)

// TestConformance_FaultsLocal_ErrorShapes: errors injected by ddblocal's
// FaultConfig reach the SDK as the typed errors DynamoDB itself sends.
func TestConformance_FaultsLocal_ErrorShapes(t *testing.T) {
	t.Parallel()
	srv := startOwnLocal(t, ddblocal.Options{TTLInterval: -1})
	c := ddbAt(srv.Endpoint())
	ks, ad := keySchema("")
	name := tableName(t)
	_, err := c.CreateTable(ctx(t), &dynamodb.CreateTableInput{TableName: aws.String(name), KeySchema: ks, AttributeDefinitions: ad,
		BillingMode: types.BillingModePayPerRequest, StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}})
	noErr(t, err, "CreateTable")
	putIt := func() error {
		_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(name), Item: Item{"pk": s("a")}})
		return err
	}
	srv.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{
		{Op: "PutItem", Code: ddblocal.FaultThroughput},
		{Op: "PutItem", Code: ddblocal.FaultThrottling},
		{Op: "PutItem", Code: ddblocal.FaultInternal},
		{Op: "TransactWriteItems", Code: ddblocal.FaultTransactionConflict},
		{Op: "DynamoDBStreams.ListStreams", Code: ddblocal.FaultInternal},
	}})
	var pte *types.ProvisionedThroughputExceededException
	if err := putIt(); !errors.As(err, &pte) {
		t.Errorf("FaultThroughput: want *types.ProvisionedThroughputExceededException, got %v", err)
	}
	requireCode(t, putIt(), "ThrottlingException", "FaultThrottling")
	var ise *types.InternalServerError
	if err := putIt(); !errors.As(err, &ise) {
		t.Errorf("FaultInternal: want *types.InternalServerError, got %v", err)
	}
	noErr(t, putIt(), "PutItem after the script ran out")
	_, err = c.TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(name), Item: Item{"pk": s("x")}}},
		{Put: &types.Put{TableName: aws.String(name), Item: Item{"pk": s("y")}}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("FaultTransactionConflict: want *types.TransactionCanceledException, got %v", err)
	}
	var codes []string
	for _, r := range tce.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	if len(codes) != 2 || codes[0] != "TransactionConflict" || codes[1] != "None" {
		t.Errorf("conflict reasons = %v, want [TransactionConflict None]", codes)
	}
	_, err = streamsAt(srv.Endpoint()).ListStreams(ctx(t), nil)
	var sise *st.InternalServerError
	if !errors.As(err, &sise) {
		t.Errorf("Streams FaultInternal: want *dynamodbstreams/types.InternalServerError, got %v", err)
	}
}

// TestConformance_FaultsLocal_Unprocessed: with FaultUnprocessed, batch
// operations answer the left-over work in DynamoDB's UnprocessedItems /
// UnprocessedKeys shape, ready to be sent again.
func TestConformance_FaultsLocal_Unprocessed(t *testing.T) {
	t.Parallel()
	srv := startOwnLocal(t, ddblocal.Options{TTLInterval: -1})
	c := ddbAt(srv.Endpoint())
	ks, ad := keySchema("")
	name := tableName(t)
	_, err := c.CreateTable(ctx(t), &dynamodb.CreateTableInput{TableName: aws.String(name), KeySchema: ks, AttributeDefinitions: ad, BillingMode: types.BillingModePayPerRequest})
	noErr(t, err, "CreateTable")
	srv.SetFaults(ddblocal.FaultConfig{Rates: map[string]map[string]float64{
		"BatchWriteItem": {ddblocal.FaultUnprocessed: 1}, "BatchGetItem": {ddblocal.FaultUnprocessed: 1}}})
	var reqs []types.WriteRequest
	var keys []Item
	for i := 0; i < 5; i++ {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: Item{"pk": s(fmt.Sprint(i))}}})
		keys = append(keys, Item{"pk": s(fmt.Sprint(i))})
	}
	w, err := c.BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{name: reqs}})
	noErr(t, err, "BatchWriteItem")
	if len(w.UnprocessedItems[name]) != 5 {
		t.Fatalf("UnprocessedItems = %d requests, want all 5", len(w.UnprocessedItems[name]))
	}
	g, err := c.BatchGetItem(ctx(t), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{name: {Keys: keys, ConsistentRead: aws.Bool(true)}}})
	noErr(t, err, "BatchGetItem")
	if u := g.UnprocessedKeys[name]; len(u.Keys) != 5 || !aws.ToBool(u.ConsistentRead) {
		t.Fatalf("UnprocessedKeys = %+v, want the 5 keys with ConsistentRead kept", u)
	}
	srv.SetFaults(ddblocal.FaultConfig{})
	_, err = c.BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: w.UnprocessedItems})
	noErr(t, err, "resending UnprocessedItems")
	g, err = c.BatchGetItem(ctx(t), &dynamodb.BatchGetItemInput{RequestItems: g.UnprocessedKeys})
	noErr(t, err, "resending UnprocessedKeys")
	if len(g.Responses[name]) != 5 {
		t.Fatalf("after resending, read %d items, want 5", len(g.Responses[name]))
	}
}
