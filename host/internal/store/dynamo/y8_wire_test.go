//go:build !noddblocal

package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

// outcome is what a caller can see of a call's failure: the store's
// sentinels it matches, the SDK's error type and code, whether retries
// ran out, and the requests it took.
type outcome struct {
	Err        bool
	Cond       bool
	Throttled  bool
	Conflict   bool
	NoTable    bool
	Reasons    []string
	APIType    string
	APICode    string
	APIMessage string
	OpError    string // the operation named by *smithy.OperationError
	MaxAttempt bool
	Requests   map[string]int64
	Item       abi.Item
}

func outcomeOf(err error, db *dynamo.DB, item abi.Item) outcome {
	o := outcome{Err: err != nil, Requests: db.Counts(), Item: item}
	if err == nil {
		return o
	}
	o.Cond = errors.Is(err, store.ErrConditionFailed)
	o.Throttled = errors.Is(err, store.ErrThrottled)
	o.Conflict = errors.Is(err, store.ErrConflict)
	o.NoTable = errors.Is(err, store.ErrNoTable)
	var tx *store.TxCanceledError
	if errors.As(err, &tx) {
		o.Reasons = tx.Reasons
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		o.APIType, o.APICode, o.APIMessage = fmt.Sprintf("%T", api), api.ErrorCode(), api.ErrorMessage()
	}
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		o.OpError = oe.ServiceID + "." + oe.OperationName
	}
	var me *retry.MaxAttemptsError
	o.MaxAttempt = errors.As(err, &me)
	return o
}

// y8Case is one hot call with what ddblocal does to it.
type y8Case struct {
	name   string
	faults []ddblocal.ScriptedFault
	run    func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error)
}

func y8Cases() []y8Case {
	notExists := &store.Cond{Expr: "attribute_not_exists(pk)"}
	exists := &store.Cond{Expr: "attribute_exists(pk)"}
	fault := func(op, code string, n int) []ddblocal.ScriptedFault {
		var fs []ddblocal.ScriptedFault
		for range n {
			fs = append(fs, ddblocal.ScriptedFault{Op: op, Code: code})
		}
		return fs
	}
	put := func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
		return nil, db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": abi.S("new"), "sk": abi.S("1")}})
	}
	get := func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
		return db.GetItem(ctx, table, key("have", "1"))
	}
	return []y8Case{
		{name: "PutItem/ConditionalCheckFailed", run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
			return nil, db.PutItem(ctx, store.Put{Table: table, Item: key("have", "1"), Cond: notExists})
		}},
		{name: "UpdateItem/ConditionalCheckFailed", run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
			return db.UpdateItem(ctx, store.Update{Table: table, Key: key("none", "1"), Expr: "SET v = :v",
				Values: map[string]abi.Value{":v": abi.N("1")}, Cond: exists})
		}},
		{name: "UpdateItem/ReturnsTheNewItem", run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
			return db.UpdateItem(ctx, store.Update{Table: table, Key: key("have", "1"), Expr: "SET #v = :v",
				Names: map[string]string{"#v": "v"}, Values: map[string]abi.Value{":v": abi.N("7")},
				Cond: &store.Cond{Expr: "attribute_exists(#p) AND NOT #v = :o", Names: map[string]string{"#p": "pk"}, Values: map[string]abi.Value{":o": abi.N("8")}}})
		}},
		{name: "DeleteItem/ConditionalCheckFailed", run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
			return nil, db.DeleteItem(ctx, store.Delete{Table: table, Key: key("none", "1"), Cond: exists})
		}},
		{name: "TransactWriteItems/CanceledWithReasons", run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
			return nil, db.TransactWriteItems(ctx, []store.Write{
				{Put: &store.Put{Table: table, Item: key("tx", "1")}},
				{Put: &store.Put{Table: table, Item: key("have", "1"), Cond: notExists}},
				{Check: &store.Check{Table: table, Key: key("none", "1"), Cond: store.Cond{Expr: "attribute_not_exists(pk)"}}},
			})
		}},
		{name: "TransactWriteItems/Conflict", faults: fault("TransactWriteItems", ddblocal.FaultTransactionConflict, 1),
			run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
				return nil, db.TransactWriteItems(ctx, []store.Write{{Put: &store.Put{Table: table, Item: key("tx", "2")}},
					{Delete: &store.Delete{Table: table, Key: key("tx", "3")}}})
			}},
		{name: "PutItem/ThroughputOnceThenSuccess", faults: fault("PutItem", ddblocal.FaultThroughput, 1), run: put},
		{name: "PutItem/ThrottlingExhaustsRetries", faults: fault("PutItem", ddblocal.FaultThrottling, 4), run: put},
		{name: "GetItem/ThroughputExhaustsRetries", faults: fault("GetItem", ddblocal.FaultThroughput, 4), run: get},
		{name: "GetItem/InternalErrorThenSuccess", faults: fault("GetItem", ddblocal.FaultInternal, 2), run: get},
		{name: "Query/ThrottledThenSuccess", faults: fault("Query", ddblocal.FaultThrottling, 1),
			run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
				p, err := db.Query(ctx, store.Query{Table: table, KeyCond: "pk = :p", Values: map[string]abi.Value{":p": abi.S("have")}})
				if len(p.Items) != 1 {
					return nil, errors.Join(err, fmt.Errorf("query read %d items", len(p.Items)))
				}
				return p.Items[0], err
			}},
		{name: "Query/ValidationNotRetried", run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
			_, err := db.Query(ctx, store.Query{Table: table, KeyCond: "pk = :p AND", Values: map[string]abi.Value{":p": abi.S("have")}})
			return nil, err
		}},
		{name: "BatchGetItem/ThroughputThenSuccess", faults: fault("BatchGetItem", ddblocal.FaultThroughput, 1),
			run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
				got, err := db.BatchGetItem(ctx, table, []abi.Item{key("have", "1"), key("none", "1")})
				if err != nil {
					return nil, err
				}
				return got[0], nil
			}},
		{name: "GetItem/NoTable", run: func(ctx context.Context, db *dynamo.DB, table string) (abi.Item, error) {
			return db.GetItem(ctx, table+"-missing", key("have", "1"))
		}},
	}
}

// TestY8_HotCallsMapErrorsAndRetryLikeTheSDK runs every hot call's
// failures (DynamoDB's own and ddblocal's scripted faults) through the wire
// path and through the SDK's client: the errors match the same sentinels
// and SDK types, the retries send the same requests.
func TestY8_HotCallsMapErrorsAndRetryLikeTheSDK(t *testing.T) {
	srv := dynamotest.Local(t, ddblocal.Options{})
	client := dynamotest.ClientAt(t, srv.Endpoint())
	wire, sdk := dynamo.New(client), dynamo.NewSDK(client)
	require.True(t, wire.Wire(), "a client NewClient built with no middleware of its caller's takes the wire path")
	require.False(t, sdk.Wire())
	ctx := context.Background()
	for _, c := range y8Cases() {
		t.Run(c.name, func(t *testing.T) {
			var got [2]outcome
			for i, db := range []*dynamo.DB{wire, sdk} {
				table := dynamotest.CreateTable(t, client, "y8")
				require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": abi.S("have"), "sk": abi.S("1"), "v": abi.N("1")}}))
				db.ResetCounts()
				srv.SetFaults(ddblocal.FaultConfig{Script: c.faults})
				item, err := c.run(ctx, db, table)
				srv.SetFaults(ddblocal.FaultConfig{})
				got[i] = outcomeOf(err, db, item)
			}
			assert.Equal(t, got[1], got[0], "wire path (first) against the SDK's client (second)")
			if c.name == "TransactWriteItems/CanceledWithReasons" {
				assert.Equal(t, []string{"None", "ConditionalCheckFailed", "None"}, got[0].Reasons)
			}
		})
	}
}

// TestY8_AnswerWithBadChecksumIsRetried: an answer whose body does not
// match its x-amz-crc32 is retried, as the SDK retries it, and the next
// good answer is used.
func TestY8_AnswerWithBadChecksumIsRetried(t *testing.T) {
	var requests atomic.Int32
	body := []byte(`{"Item":{"pk":{"S":"a"},"sk":{"S":"b"},"v":{"N":"1"}}}`)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := crc32.ChecksumIEEE(body)
		if requests.Add(1) == 1 {
			sum++ // damaged in transit
		}
		w.Header().Set("x-amz-crc32", strconv.FormatUint(uint64(sum), 10))
		_, _ = w.Write(body)
	}))
	t.Cleanup(ts.Close)
	db := dynamo.New(dynamotest.ClientAt(t, ts.URL))
	require.True(t, db.Wire())
	it, err := db.GetItem(context.Background(), "t", key("a", "b"))
	require.NoError(t, err)
	assert.Equal(t, "1", it["v"].Str)
	assert.Equal(t, int32(2), requests.Load(), "the damaged answer was retried once")
}
