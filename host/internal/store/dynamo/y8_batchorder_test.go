package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

// keyTable creates a table whose key is attrs (name, type; the first the
// hash key, a second the range key), deleted when t ends.
func keyTable(t *testing.T, c *dynamodb.Client, attrs ...string) string {
	t.Helper()
	name := fmt.Sprintf("order-%d", time.Now().UnixNano()%1_000_000_000)
	in := &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest}
	for i := 0; i < len(attrs); i += 2 {
		kt := types.KeyTypeHash
		if i > 0 {
			kt = types.KeyTypeRange
		}
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(attrs[i]), AttributeType: types.ScalarAttributeType(attrs[i+1])})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(attrs[i]), KeyType: kt})
	}
	ctx := context.Background()
	_, err := c.CreateTable(ctx, in)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	w := dynamodb.NewTableExistsWaiter(c, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 10*time.Millisecond, 100*time.Millisecond
	})
	require.NoError(t, w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 20*time.Second))
	return name
}

// bothPaths runs fn with a DB on the wire path and one through the SDK.
func bothPaths(t *testing.T, fn func(t *testing.T, db *dynamo.DB)) {
	c := dynamotest.Client(t)
	for _, p := range []struct {
		name string
		db   *dynamo.DB
	}{{"wire", dynamo.New(c)}, {"sdk", dynamo.NewSDK(c)}} {
		t.Run(p.name, func(t *testing.T) { fn(t, p.db) })
	}
}

// TestY8_BatchGetItemMatchesNumberKeysInAnyForm: keys asking for one
// number in several forms ("1", "1.0", "10e-1") are one key to DynamoDB:
// asked once, the item answered in every position that asked for it.
func TestY8_BatchGetItemMatchesNumberKeysInAnyForm(t *testing.T) {
	bothPaths(t, func(t *testing.T, db *dynamo.DB) {
		ctx := context.Background()
		table := keyTable(t, db.Client(), "pk", "S", "sk", "N")
		for _, sk := range []string{"1", "2.5", "10", "-3"} {
			require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": abi.S("a"), "sk": abi.N(sk), "v": abi.S("v" + sk)}}))
		}
		nk := func(sk string) abi.Item { return abi.Item{"pk": abi.S("a"), "sk": abi.N(sk)} }
		keys := []abi.Item{nk("1.0"), nk("10"), nk("25e-1"), nk("1"), nk("3"), nk("1E1"), nk("2.50"), nk("10e-1"), nk("-3.00"),
			{"pk": abi.S("b"), "sk": abi.N("1")}}
		db.ResetCounts()
		got, err := db.BatchGetItem(ctx, table, keys)
		require.NoError(t, err)
		want := []string{"v1", "v10", "v2.5", "v1", "", "v10", "v2.5", "v1", "v-3", ""}
		require.Len(t, got, len(want))
		for i, w := range want {
			if w == "" {
				assert.Nil(t, got[i], "key %d", i)
				continue
			}
			require.NotNil(t, got[i], "key %d", i)
			assert.Equal(t, w, got[i]["v"].Str, "key %d", i)
		}
		assert.Equal(t, int64(1), db.Counts()["BatchGetItem"])
	})
}

// TestY8_BatchGetItemMatchesBinaryAndHashOnlyKeys: a table keyed by one
// binary attribute; keys asked in reverse, one twice, one absent.
func TestY8_BatchGetItemMatchesBinaryAndHashOnlyKeys(t *testing.T) {
	bothPaths(t, func(t *testing.T, db *dynamo.DB) {
		ctx := context.Background()
		table := keyTable(t, db.Client(), "id", "B")
		for i := range 5 {
			require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"id": abi.B([]byte{0, byte(i)}), "i": abi.N(fmt.Sprint(i))}}))
		}
		var keys []abi.Item
		for i := 5; i >= 0; i-- { // 5 is absent
			keys = append(keys, abi.Item{"id": abi.B([]byte{0, byte(i)})})
		}
		keys = append(keys, abi.Item{"id": abi.B([]byte{0, 2})})
		got, err := db.BatchGetItem(ctx, table, keys)
		require.NoError(t, err)
		require.Len(t, got, 7)
		assert.Nil(t, got[0])
		for j := 1; j < 6; j++ {
			require.NotNil(t, got[j], "key %d", j)
			assert.Equal(t, fmt.Sprint(5-j), got[j]["i"].Str)
		}
		assert.Equal(t, got[3], got[6])
	})
}

// TestY8_BatchGetItemKeysOfOtherAttributesAreRefusedAsBefore: keys whose
// attributes differ from one to another go to DynamoDB, which refuses
// them; a key of a type no key has is refused before anything is sent.
func TestY8_BatchGetItemKeysOfOtherAttributesAreRefusedAsBefore(t *testing.T) {
	bothPaths(t, func(t *testing.T, db *dynamo.DB) {
		ctx := context.Background()
		table := keyTable(t, db.Client(), "pk", "S", "sk", "S")
		db.ResetCounts()
		_, err := db.BatchGetItem(ctx, table, []abi.Item{{"pk": abi.S("a"), "sk": abi.S("1")}, {"pk": abi.S("a"), "other": abi.S("1")}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "ValidationException")
		assert.Equal(t, int64(1), db.Counts()["BatchGetItem"])

		db.ResetCounts()
		_, err = db.BatchGetItem(ctx, table, []abi.Item{{"pk": abi.S("a"), "sk": abi.S("1")}, {"pk": abi.S("a"), "sk": abi.Bool(true)}})
		require.ErrorContains(t, err, `dynamo BatchGetItem key 1: key attribute "sk" has type BOOL; keys are S, N or B`)
		_, err = db.BatchGetItem(ctx, table, []abi.Item{{"pk": abi.S("a"), "sk": abi.N("x1")}})
		require.ErrorContains(t, err, `dynamo BatchGetItem key 0: key attribute "sk": bad number "x1"`)
		assert.Zero(t, db.Counts()["BatchGetItem"])
	})
}

// TestY8_ConcurrentBatchGetItemsKeepTheirOwnKeys: calls at once, each of
// its own keys and sizes (what one call works in is reused by the next),
// each answered in the order of its own keys.
func TestY8_ConcurrentBatchGetItemsKeepTheirOwnKeys(t *testing.T) {
	db, table := setup(t)
	ctx := context.Background()
	for i := range 40 {
		require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": abi.S("c"), "sk": abi.S(fmt.Sprint(i)), "i": abi.N(fmt.Sprint(i))}}))
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for round := range 10 {
				var keys []abi.Item
				for j := range 3 + (g+round)%20 {
					keys = append(keys, key("c", fmt.Sprint((g*7+round*3+j*5)%45))) // 40..44 absent
				}
				got, err := db.BatchGetItem(ctx, table, keys)
				if err == nil && len(got) != len(keys) {
					err = fmt.Errorf("%d items for %d keys", len(got), len(keys))
				}
				for j := 0; err == nil && j < len(keys); j++ {
					want := keys[j]["sk"].Str
					switch {
					case want >= "40" && len(want) == 2 && got[j] != nil:
						err = fmt.Errorf("key %s: absent, read %v", want, got[j])
					case (want < "40" || len(want) == 1) && (got[j] == nil || got[j]["i"].Str != want):
						err = fmt.Errorf("key %s: read %v", want, got[j])
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
}
