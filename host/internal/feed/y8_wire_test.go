package feed_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/internal/backoff"
)

// wireOf returns the env's Streams client on the wire path, counting its
// GetRecords attempts in n.
func wireOf(t *testing.T, e *env, n *atomic.Int64) feed.API {
	t.Helper()
	api := feed.WithWire(context.Background(), e.api.API.(*dynamodbstreams.Client))
	w, ok := api.(*feed.WireAPI)
	require.True(t, ok, "the Streams client has a wire path")
	w.Wire().Attempt = func(op string) {
		if op == "GetRecords" {
			n.Add(1)
		}
	}
	return api
}

// TestY8_StreamsRecordsOnTheWireAreTheSDKs reads one stream (shards
// rolled over, every attribute type, inserts, updates with old images
// and removes) through the SDK's client and through the wire path: the
// same records, field for field.
func TestY8_StreamsRecordsOnTheWireAreTheSDKs(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 4})
	every := abi.Item{"pk": abi.S("every"), "sk": abi.S("x"), "s": abi.S("héllo ✓ \"q\"\n"), "empty": abi.S(""),
		"n": abi.N("12345678901234567890123456789012345678"), "b": abi.B([]byte{0, 1, 255}), "t": abi.Bool(true),
		"null": abi.Null(), "m": abi.M(abi.Item{"l": abi.L(abi.S("x"), abi.N("1.5"), abi.M(abi.Item{}), abi.L())}),
		"ss": abi.SS("a", "b"), "ns": abi.NS("1", "-2.5"), "bs": abi.BS([]byte("x"), []byte{0})}
	e.Put(t, e.table, every)
	for i := range 9 {
		e.put(t, fmt.Sprintf("k%d", i%4), i) // updates: old images
	}
	every["n"] = abi.N("-1")
	e.Put(t, e.table, every)
	ctx := context.Background()
	var attempts atomic.Int64
	o := feed.Options{BatchSize: 3, PollInterval: time.Millisecond}
	sdk := readAll(t, ctx, feed.NewReader(e.api, e.arn, o))
	wire := readAll(t, ctx, feed.NewReader(wireOf(t, e, &attempts), e.arn, o))
	require.Len(t, sdk.records, 11)
	require.GreaterOrEqual(t, len(sdk.shards), 3)
	assert.Equal(t, sdk.records, wire.records)
	assert.Equal(t, sdk.started, wire.started)
	assert.Positive(t, attempts.Load(), "GetRecords went on the wire path")
	assert.Equal(t, "-1", wire.records[len(wire.records)-1].DynamoDB.NewImage["n"].Str)
	assert.False(t, wire.records[0].DynamoDB.ApproximateCreationDateTime.IsZero())
}

// streamsOutcome is what a reader's caller sees of a scenario's errors
// and retries.
type streamsOutcome struct {
	Labels                 []string
	Renewals, Retries      map[string]int
	Trimmed, Gone          []bool
	Codes, Types, Ops      []string
	ThrottledAttempts      int
	ThrottledOp            string
	Canceled, AttemptsSeen bool
}

func (o *streamsOutcome) err(err error) {
	var te *feed.TrimmedError
	o.Trimmed = append(o.Trimmed, errors.Is(err, feed.ErrTrimmed))
	o.Gone = append(o.Gone, errors.As(err, &te) && te.Gone)
	var ae smithy.APIError
	if errors.As(err, &ae) {
		o.Codes = append(o.Codes, ae.ErrorCode())
		o.Types = append(o.Types, fmt.Sprintf("%T", ae))
	}
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		o.Ops = append(o.Ops, oe.ServiceID+"/"+oe.OperationName)
	}
}

// streamsScenario runs the error cases of the Streams reads on fresh
// streams, through the SDK's client or the wire path: an expired
// iterator, throttling (scripted faults) retried and then bounded, a
// cancelled context; trimmed records (GetRecords with an iterator held
// across the trim, GetShardIterator from a checkpoint), a shard trimmed
// away.
func streamsScenario(t *testing.T, onWire bool) streamsOutcome {
	out := streamsOutcome{Renewals: map[string]int{}, Retries: map[string]int{}}
	var counters []*atomic.Int64
	// two streams of two shards (k0..k2 closed, k3, k4 open): one whose
	// iterators expire in a minute, one whose records are kept a minute
	envs := []*env{
		start(t, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 3, IteratorTTL: time.Minute}),
		start(t, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 3, Retention: time.Minute}),
	}
	ctx := context.Background()
	var first, open string
	var reader func(batch, maxRetries int) *feed.Reader
	use := func(e *env) {
		attempts := &atomic.Int64{}
		var api feed.API = e.api
		if onWire {
			api = wireOf(t, e, attempts)
			counters = append(counters, attempts)
		}
		reader = func(batch, maxRetries int) *feed.Reader {
			return feed.NewReader(api, e.arn, feed.Options{BatchSize: batch, PollInterval: time.Millisecond, MaxThrottleRetries: maxRetries,
				Backoff: backoff.Policy{Base: time.Millisecond, Max: 10 * time.Millisecond},
				OnRetry: func(op string, _ int, err error) {
					var ae smithy.APIError
					if errors.As(err, &ae) && ae.ErrorCode() == "ExpiredIteratorException" {
						out.Renewals[op]++
					} else {
						out.Retries[op]++
					}
				}})
		}
		for i := range 5 {
			e.put(t, fmt.Sprintf("k%d", i), i)
		}
		shards, err := reader(1, 0).Shards(ctx)
		require.NoError(t, err)
		require.Len(t, shards, 2)
		first, open = shards[0].ID, shards[1].ID
	}

	e := envs[0]
	use(e)
	// an expired iterator, renewed
	it := reader(2, 0).Iterator(first, "")
	for range 3 {
		b, err := it.Next(ctx)
		require.NoError(t, err)
		for _, rec := range b.Records {
			out.Labels = append(out.Labels, label(rec))
		}
		e.clock.Jump(2 * time.Minute)
	}
	// throttling, retried; then bounded
	e.Server.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{
		{Op: "DynamoDBStreams.GetRecords", Code: ddblocal.FaultThroughput},
		{Op: "DynamoDBStreams.GetRecords", Code: ddblocal.FaultThrottling},
		{Op: "DynamoDBStreams.GetRecords", Code: "LimitExceededException"},
	}})
	b, err := reader(10, 0).Iterator(open, "").Next(ctx)
	require.NoError(t, err)
	out.Labels = append(out.Labels, fmt.Sprint(len(b.Records)))
	e.Server.SetFaults(ddblocal.FaultConfig{Rates: map[string]map[string]float64{"DynamoDBStreams.GetRecords": {ddblocal.FaultThroughput: 1}}})
	_, err = reader(10, 2).Iterator(open, "").Next(ctx)
	var th *feed.ThrottledError
	if errors.As(err, &th) {
		out.ThrottledAttempts, out.ThrottledOp = th.Attempts, th.Op
	}
	out.err(err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = reader(10, 0).Iterator(open, "").Next(cctx)
	out.Canceled = errors.Is(err, context.Canceled)

	e = envs[1]
	use(e)
	// trimmed records: an iterator held across the trim, a checkpoint
	held := reader(1, 0).Iterator(open, "")
	b, err = held.Next(ctx)
	require.NoError(t, err)
	out.Labels = append(out.Labels, label(b.Records[0]))
	ckpt := b.Last()
	e.clock.Jump(2 * time.Minute)
	_, err = held.Next(ctx)
	out.err(err)
	_, err = reader(2, 0).Iterator(open, ckpt).Next(ctx)
	out.err(err)
	// a shard trimmed away
	e.put(t, "fresh", 1)
	_, err = reader(2, 0).Iterator(first, "").Next(ctx)
	out.err(err)
	out.AttemptsSeen = true
	for _, n := range counters {
		out.AttemptsSeen = out.AttemptsSeen && n.Load() > 0
	}
	return out
}

// TestY8_StreamsReadsMapErrorsAndRetryLikeTheSDK runs the error cases of
// the Streams reads through the SDK's client and through the wire path:
// the same records, errors (types, codes, operation), renewals and
// retries.
func TestY8_StreamsReadsMapErrorsAndRetryLikeTheSDK(t *testing.T) {
	sdk := streamsScenario(t, false)
	wire := streamsScenario(t, true)
	assert.Equal(t, sdk, wire)
	// what both must be
	assert.Equal(t, []string{"k0=0", "k1=1", "k2=2", "2", "k3=3"}, sdk.Labels)
	assert.Equal(t, 1, sdk.Renewals["GetRecords"], "an expired iterator is renewed")
	assert.Equal(t, 3+2, sdk.Retries["GetRecords"], "the scripted throttles retried, then the bounded ones")
	assert.Equal(t, 3, sdk.ThrottledAttempts)
	assert.Equal(t, []bool{false, true, true, true}, sdk.Trimmed)
	assert.Equal(t, []bool{false, false, false, true}, sdk.Gone)
	assert.Contains(t, sdk.Codes, "ProvisionedThroughputExceededException")
	assert.Contains(t, sdk.Codes, "TrimmedDataAccessException")
	assert.Contains(t, sdk.Types, "*types.TrimmedDataAccessException")
	assert.Equal(t, []string{"GetRecords", "GetRecords", "GetShardIterator", "GetShardIterator"}, opsOf(sdk.Ops))
	assert.True(t, sdk.Canceled)
	assert.True(t, wire.AttemptsSeen)
}

func opsOf(ops []string) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op[len("DynamoDB Streams/"):]
	}
	return out
}
