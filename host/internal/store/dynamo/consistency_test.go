package dynamo_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

// consistency records the ConsistentRead flag of every read sent.
type consistency struct {
	mu   sync.Mutex
	seen map[string][]bool
}

func (c *consistency) ID() string { return "test.consistency" }

func (c *consistency) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	c.mu.Lock()
	switch p := in.Parameters.(type) {
	case *dynamodb.GetItemInput:
		c.seen["GetItem"] = append(c.seen["GetItem"], p.ConsistentRead != nil && *p.ConsistentRead)
	case *dynamodb.QueryInput:
		c.seen["Query"] = append(c.seen["Query"], p.ConsistentRead != nil && *p.ConsistentRead)
	case *dynamodb.BatchGetItemInput:
		for _, ka := range p.RequestItems {
			c.seen["BatchGetItem"] = append(c.seen["BatchGetItem"], ka.ConsistentRead != nil && *ka.ConsistentRead)
		}
	}
	c.mu.Unlock()
	return next.HandleInitialize(ctx, in)
}

func TestDynamo_TableReadsAreStronglyConsistent(t *testing.T) {
	rec := &consistency{seen: map[string][]bool{}}
	client := dynamotest.ClientAt(t, dynamotest.Endpoint(t), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error { return s.Initialize.Add(rec, middleware.After) })
	})
	db := dynamo.New(client)
	table := dynamotest.CreateTable(t, client, "consistent")
	ctx := context.Background()
	require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: key("c", "1")}))
	_, err := db.GetItem(ctx, table, key("c", "1"))
	require.NoError(t, err)
	_, err = db.BatchGetItem(ctx, table, []abi.Item{key("c", "1"), key("c", "2")})
	require.NoError(t, err)
	_, err = db.Query(ctx, store.Query{Table: table, KeyCond: "#pk = :pk", Names: map[string]string{"#pk": "pk"}, Values: map[string]abi.Value{":pk": abi.S("c")}})
	require.NoError(t, err)
	assert.Equal(t, map[string][]bool{"GetItem": {true}, "BatchGetItem": {true}, "Query": {true}}, rec.seen)
}
