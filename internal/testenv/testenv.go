// Package testenv starts what the host's tests talk to: an in-process
// ddblocal server reached through the real aws-sdk-go-v2 client over HTTP,
// and the tables of an event store and its read models.
package testenv

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/host/store/dynamo"
	"github.com/dynafold/dynafold/host/store/dynamo/dynamotest"
	"github.com/dynafold/dynafold/internal/ddblocal"
)

// Env is a running ddblocal with a client.
type Env struct {
	Server *ddblocal.Server
	Client *dynamodb.Client
	DB     *dynamo.DB
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
	return &Env{Server: srv, Client: client, DB: dynamo.New(client)}
}

var tableSeq atomic.Int64

// Table creates a table keyed by pk (S) and sk (S), with a NEW_IMAGE stream
// when stream is true, and returns its (unique) name.
func (e *Env) Table(t testing.TB, prefix string, stream bool) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", strings.ToLower(prefix), tableSeq.Add(1))
	in := &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	}
	if stream {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.Client.CreateTable(ctx, in); err != nil {
		t.Fatalf("CreateTable %s: %v", name, err)
	}
	return name
}
