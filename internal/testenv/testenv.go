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

	"github.com/dynafold/dynafold/ddblocal"
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
