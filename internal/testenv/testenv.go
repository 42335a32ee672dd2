// Package testenv starts what the host's tests talk to: an in-process
// ddblocal server reached through the real aws-sdk-go-v2 client over HTTP,
// and the tables of an event store and its read models.
package testenv

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

// Env is a running ddblocal with a client.
type Env struct {
	Server *ddblocal.Server
	Client *dynamodb.Client
}

// Start starts ddblocal in-process for the test, closed at its end.
func Start(t testing.TB, opts ...func(*ddblocal.Options)) *Env {
	t.Helper()
	o := ddblocal.Options{}
	for _, f := range opts {
		f(&o)
	}
	ctx := context.Background()
	srv, err := ddblocal.Start(ctx, o)
	if err != nil {
		t.Fatalf("starting ddblocal: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	client := dynamotest.ClientAt(t, srv.Endpoint())
	return &Env{Server: srv, Client: client}
}

// Table creates a table keyed by pk (S) and sk (S), with a NEW_IMAGE stream
// when stream is true, and returns its (unique) name.
func (e *Env) Table(t testing.TB, prefix string, stream bool) string {
	t.Helper()
	view := types.StreamViewTypeNewImage
	if !stream {
		view = ""
	}
	return dynamotest.CreateTableWith(t, e.Client, strings.ToLower(prefix), view)
}

// Put writes item to table (no condition), failing t on an error.
func (e *Env) Put(t testing.TB, table string, item abi.Item) {
	t.Helper()
	m, err := ddbclient.ToAttributeMap(item)
	if err != nil {
		t.Fatalf("put into %s: %v", table, err)
	}
	if _, err := e.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &table, Item: m}); err != nil {
		t.Fatalf("put into %s: %v", table, err)
	}
}

// Delete removes the item of key from table (no condition), failing t on
// an error.
func (e *Env) Delete(t testing.TB, table string, key abi.Item) {
	t.Helper()
	k, err := ddbclient.ToAttributeMap(key)
	if err != nil {
		t.Fatalf("delete from %s: %v", table, err)
	}
	if _, err := e.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: &table, Key: k}); err != nil {
		t.Fatalf("delete from %s: %v", table, err)
	}
}

// Get reads the item of key from table, strongly consistent; nil when there
// is none.
func (e *Env) Get(t testing.TB, table string, key abi.Item) abi.Item {
	t.Helper()
	k, err := ddbclient.ToAttributeMap(key)
	if err != nil {
		t.Fatalf("get from %s: %v", table, err)
	}
	consistent := true
	out, err := e.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, Key: k, ConsistentRead: &consistent})
	if err != nil {
		t.Fatalf("get from %s: %v", table, err)
	}
	if out.Item == nil {
		return nil
	}
	it, err := ddbclient.FromAttributeMap(out.Item)
	if err != nil {
		t.Fatalf("get from %s: %v", table, err)
	}
	return it
}
