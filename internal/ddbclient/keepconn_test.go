package ddbclient_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/netenv"
)

// TestY7_ConnectionsOutliveTheirRequests: one request after another, of
// every size, keeps using one connection. Before KeepConnections, 1 request
// in 5 to 10 closed its connection after it succeeded (the SDK closes the
// request body while net/http still copies what is left of it), so the
// next paid a new connection: to DynamoDB, TCP and TLS handshakes.
func TestY7_ConnectionsOutliveTheirRequests(t *testing.T) {
	n := netenv.Start(t)
	table := n.Table(t, "keep", false)
	c, err := ddbclient.NewClient(context.Background(), n.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	n.Reset()
	const each = 40
	for i := 0; i < 3*each; i++ {
		item := map[string]types.AttributeValue{
			"pk":   &types.AttributeValueMemberS{Value: fmt.Sprint("k", i)},
			"sk":   &types.AttributeValueMemberS{Value: "s"},
			"data": &types.AttributeValueMemberS{Value: strings.Repeat("x", []int{200, 3000, 9000}[i%3])},
		}
		if i%2 == 0 {
			_, err = c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
		} else {
			_, err = c.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{
				TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(table), Item: item}}}})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := n.Conns(); got != 1 {
		t.Errorf("%d requests, one after another, opened %d connections; want 1", 3*each, got)
	}
}
