package kfeed_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/kfeed"
)

// kinesisOutcome is what a reader's caller sees of the scenario: the
// records (all but their identifiers, which differ between streams), the
// retries, the errors.
type kinesisOutcome struct {
	Records                 []string
	Behind                  []bool
	Retries                 []string
	Children, MergedParents []string
	ThrottledAttempts       int
	Trimmed, Gone           bool
	Codes, Types, Ops       []string
	WireUsed                bool
}

func (o *kinesisOutcome) err(err error) {
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

func (o *kinesisOutcome) batch(b feed.Batch) {
	for _, r := range b.Records {
		o.Records = append(o.Records, recordText(r))
	}
	o.Behind = append(o.Behind, b.BehindKnown)
}

func recordText(r host.Record) string {
	d := r.DynamoDB
	return fmt.Sprintf("%s %s %s %s %s keys=%v new=%v old=%v size=%d at=%s", r.EventName, r.EventSource, r.EventVersion, r.AWSRegion,
		d.StreamViewType, d.Keys, d.NewImage, d.OldImage, d.SizeBytes, d.ApproximateCreationDateTime.UTC().Format(time.RFC3339Nano))
}

// kinesisScenario reads a fresh stream through the SDK's Kinesis client or
// the wire path (kfeed.WithWire): scripted throttles retried, an expired
// iterator renewed, a bound on throttle retries, a drained shard's
// children named by GetRecords after a split and a merge, and a
// checkpoint trimmed past retention.
func kinesisScenario(t *testing.T, onWire bool) kinesisOutcome {
	e := startK(t)
	ctx := context.Background()
	var api kfeed.API = e.kc
	var attempts atomic.Int64
	if onWire {
		api = kfeed.WithWire(ctx, e.kc)
		w, ok := api.(*kfeed.WireAPI)
		require.True(t, ok, "the Kinesis client has a wire path")
		w.Wire().Attempt = func(op string) {
			if op == "GetRecords" {
				attempts.Add(1)
			}
		}
	}
	var out kinesisOutcome
	rt := &retries{}
	open := func(o kfeed.Options) *kfeed.Reader {
		o.Backoff, o.ReadsPerSecond = quick, -1
		rd, err := kfeed.Open(ctx, api, "k", o)
		require.NoError(t, err)
		return rd
	}
	seqs := put(t, e.kc, "k", "a", 0, 3)
	rd := open(kfeed.Options{BatchSize: 2, OnRetry: rt.note})
	shards, err := rd.Shards(ctx)
	require.NoError(t, err)
	first := shards[0].ID

	// scripted throttles, retried
	e.srv.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{
		{Op: "Kinesis.GetRecords", Code: ddblocal.FaultThroughput}, {Op: "Kinesis.GetRecords", Code: ddblocal.FaultThroughput}}})
	it := rd.Iterator(first, "")
	b, err := it.Next(ctx)
	require.NoError(t, err)
	out.batch(b)
	// an expired iterator, renewed
	e.clock.Jump(6 * time.Minute)
	put(t, e.kc, "k", "b", 0, 2)
	for n := 0; n < 3; {
		b, err = it.Next(ctx)
		require.NoError(t, err)
		out.batch(b)
		n += len(b.Records)
	}
	// a bound on throttle retries
	e.srv.SetFaults(ddblocal.FaultConfig{Rates: map[string]map[string]float64{"Kinesis.GetRecords": {ddblocal.FaultThroughput: 1}}})
	_, err = open(kfeed.Options{MaxThrottleRetries: 2}).Iterator(first, "").Next(ctx)
	var th *feed.ThrottledError
	if errors.As(err, &th) {
		out.ThrottledAttempts = th.Attempts
	}
	out.err(err)
	e.srv.SetFaults(ddblocal.FaultConfig{})
	out.Retries = rt.get()

	// a drained shard's children, from GetRecords
	halves, err := e.srv.SplitKinesisShard(ctx, "k", first)
	require.NoError(t, err)
	merged, err := e.srv.MergeKinesisShards(ctx, "k", halves[0], halves[1])
	require.NoError(t, err)
	rd = open(kfeed.Options{})
	for it := rd.Iterator(first, ""); !it.Finished(); {
		b, err := it.Next(ctx)
		require.NoError(t, err)
		out.batch(b)
	}
	kids, err := rd.Children(ctx, first)
	require.NoError(t, err)
	for _, k := range kids {
		out.Children = append(out.Children, fmt.Sprint(k.ID == halves[0] || k.ID == halves[1]))
	}
	for it := rd.Iterator(halves[0], ""); !it.Finished(); {
		_, err := it.Next(ctx)
		require.NoError(t, err)
	}
	kids, err = rd.Children(ctx, halves[0])
	require.NoError(t, err)
	for _, k := range kids {
		out.MergedParents = append(out.MergedParents, fmt.Sprint(k.ID == merged, len(k.Parents())))
	}

	// a checkpoint trimmed past retention
	e.clock.Jump(25 * time.Hour)
	_, err = open(kfeed.Options{}).Iterator(first, seqs[0]).Next(ctx)
	var te *feed.TrimmedError
	out.Trimmed, out.Gone = errors.As(err, &te), te != nil && te.Gone
	out.err(err)
	out.WireUsed = !onWire || attempts.Load() > 0
	return out
}

// TestY8_KinesisReadsMapErrorsAndRetryLikeTheSDK runs the Kinesis reads'
// cases through the SDK's client and the wire path: the same records
// (decoded change records, field for field), retries, renewals,
// children, error types, codes and operations.
func TestY8_KinesisReadsMapErrorsAndRetryLikeTheSDK(t *testing.T) {
	sdk := kinesisScenario(t, false)
	wire := kinesisScenario(t, true)
	assert.Equal(t, sdk, wire)
	// what both must be
	require.Len(t, sdk.Records, 10) // 5, then the whole drained shard again
	assert.Contains(t, sdk.Records[0], "INSERT aws:dynamodb")
	assert.Contains(t, sdk.Behind, true, "MillisBehindLatest read")
	assert.Equal(t, []string{"GetRecords#1 ProvisionedThroughputExceededException", "GetRecords#2 ProvisionedThroughputExceededException",
		"GetRecords#1 ExpiredIteratorException"}, sdk.Retries)
	assert.Equal(t, 3, sdk.ThrottledAttempts)
	assert.Equal(t, []string{"true", "true"}, sdk.Children)
	assert.Equal(t, []string{"true 2"}, sdk.MergedParents)
	assert.True(t, sdk.Trimmed)
	assert.Contains(t, sdk.Types, "*types.ProvisionedThroughputExceededException")
	assert.Contains(t, sdk.Ops, "Kinesis/GetRecords")
	assert.True(t, wire.WireUsed)
}
