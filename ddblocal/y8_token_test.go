package ddblocal

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	bolt "go.etcd.io/bbolt"
)

// TestY8_ClientRequestTokenSurvivesAKill: with a data dir, a
// TransactWriteItems' ClientRequestToken is stored with its writes. After
// the ddblocal that applied it is killed (its answer lost, say) and
// another starts on the directory, the same request with the same token
// succeeds without writing again, and other parameters with it are an
// IdempotentParameterMismatchException; so after a clean stop and start
// (the token now in the data file); once its 10-minute window has ended
// the request is applied as new, and the checkpoint drops the old token.
func TestY8_ClientRequestTokenSurvivesAKill(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t)
	c := startChild(t, dir)
	db, _ := verifyClients(c.wait(t))
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("idem"),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	}); err != nil {
		c.kill()
		t.Fatal(err)
	}
	add := func(v string) *dynamodb.TransactWriteItemsInput {
		return &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String("tok-kill"), TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: aws.String("idem"), Key: map[string]types.AttributeValue{"pk": s("a")},
				UpdateExpression: aws.String("ADD n :d"), ExpressionAttributeValues: map[string]types.AttributeValue{":d": n(v)}}},
		}}
	}
	if _, err := db.TransactWriteItems(ctx, add("1")); err != nil {
		c.kill()
		t.Fatal(err)
	}
	c.kill()

	clock := &fakeClock{t: time.Now()} // the child ran on real time
	start := func() (*Server, *dynamodb.Client) {
		t.Helper()
		srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1, Now: clock.Now})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		db, _ := verifyClients(srv.Endpoint())
		return srv, db
	}
	counter := func(db *dynamodb.Client) string {
		t.Helper()
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("idem"), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": s("a")}})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := out.Item["n"].(*types.AttributeValueMemberN)
		if v == nil {
			return ""
		}
		return v.Value
	}
	for _, when := range []string{"after the kill", "after a clean stop"} {
		srv, db := start()
		if _, err := db.TransactWriteItems(ctx, add("1")); err != nil {
			t.Errorf("%s: the same request with the same token: %v; want success", when, err)
		}
		if got := counter(db); got != "1" {
			t.Errorf("%s: n = %q after the retry, want 1 (one write)", when, got)
		}
		_, err := db.TransactWriteItems(ctx, add("2"))
		var ipm *types.IdempotentParameterMismatchException
		if !errors.As(err, &ipm) {
			t.Errorf("%s: the same token with other parameters: %v; want IdempotentParameterMismatchException", when, err)
		}
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
	}

	clock.Add(idemWindow + time.Second)
	srv, db := start()
	if _, err := db.TransactWriteItems(ctx, add("1")); err != nil {
		t.Errorf("after the window: %v; want success", err)
	}
	if got := counter(db); got != "2" {
		t.Errorf("after the window: n = %q, want 2 (the request applied as new)", got)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(filepath.Join(dir, dataFileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	_ = bdb.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(tokensBucket)
		if b == nil {
			t.Error("no stored tokens")
			return nil
		}
		if n := b.Stats().KeyN; n != 1 {
			t.Errorf("%d stored tokens, want 1: the expired one dropped at the checkpoint, the new one kept", n)
		}
		return nil
	})
}
