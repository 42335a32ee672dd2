package ddblocal

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// A put's write carries its item as its key (no key map per write): the
// stream records of PutItem, BatchWriteItem and TransactWriteItems puts
// still hold only the key attributes in Keys, and a later put and delete
// of the same key find the item.
func TestY8_PutStreamRecordKeysHoldOnlyTheKey(t *testing.T) {
	srv := startServer(t, Options{})
	c, sc := client(srv, 1), streamsClient(srv)
	ctx := ctxT(t)
	arn := streamTable(t, c, "keys", true)
	item := func(sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s("p"), "sk": s(sk), "v": n("1"), "other": s("x")}
	}
	changed := item("a")
	changed["v"] = n("2")
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("keys"), Item: item("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
		"keys": {{PutRequest: &types.PutRequest{Item: item("b")}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("keys"), Item: item("c")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("keys"), Item: changed}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("keys"), Key: map[string]types.AttributeValue{"pk": s("p"), "sk": s("b")}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range firstPageRecords(t, sc, arn) {
		k := r.Dynamodb.Keys
		pk, _ := k["pk"].(*stypes.AttributeValueMemberS)
		sk, _ := k["sk"].(*stypes.AttributeValueMemberS)
		if len(k) != 2 || pk == nil || sk == nil || pk.Value != "p" {
			t.Errorf("%s record's Keys %v, want pk and sk only", r.EventName, k)
			continue
		}
		got = append(got, string(r.EventName)+" "+sk.Value)
	}
	want := []string{"INSERT a", "INSERT b", "INSERT c", "MODIFY a", "REMOVE b"}
	if len(got) != len(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("records %v, want %v", got, want)
		}
	}
}
