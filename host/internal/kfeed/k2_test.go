package kfeed_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/kfeed"
	"github.com/dynafold/dynafold/internal/backoff"
)

// retries notes the reader's retries.
type retries struct {
	mu  sync.Mutex
	ops []string
}

func (r *retries) note(op string, attempt int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	code := ""
	var ae interface{ ErrorCode() string }
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	r.ops = append(r.ops, op+"#"+string(rune('0'+attempt))+" "+code)
}

func (r *retries) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ops...)
}

func seqsOf(recs []host.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.DynamoDB.SequenceNumber)
	}
	return out
}

var quick = backoff.Policy{Base: time.Millisecond, Max: 4 * time.Millisecond}

func TestK2_ThrottledGetRecordsBacksOff(t *testing.T) {
	e := startK(t)
	seqs := put(t, e.kc, "k", "a", 0, 3)
	ctx := context.Background()
	rt := &retries{}
	rd, err := kfeed.Open(ctx, e.kc, "k", kfeed.Options{Backoff: quick, OnRetry: rt.note, ReadsPerSecond: -1})
	require.NoError(t, err)
	shards, err := rd.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, shards, 1)

	// three throttled answers in a row: retried, with the delay growing, and nothing lost
	const code = ddblocal.FaultThroughput
	e.srv.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "Kinesis.GetRecords", Code: code}, {Op: "Kinesis.GetRecords", Code: code}, {Op: "Kinesis.GetRecords", Code: code}}})
	it := rd.Iterator(shards[0].ID, "")
	b, err := it.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, seqs, seqsOf(b.Records))
	assert.Equal(t, []string{"GetRecords#1 " + code, "GetRecords#2 " + code, "GetRecords#3 " + code}, rt.get())
	assert.True(t, b.BehindKnown, "MillisBehindLatest is the batch's Behind")
	assert.Equal(t, "a", b.Records[0].DynamoDB.Keys["pk"].Str, "the record's data decoded as the DynamoDB change record")

	// past MaxThrottleRetries: a typed error, the position kept
	rd2, err := kfeed.Open(ctx, e.kc, "k", kfeed.Options{Backoff: quick, MaxThrottleRetries: 2, ReadsPerSecond: -1})
	require.NoError(t, err)
	e.srv.SetFaults(ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "Kinesis.GetRecords", Code: code}, {Op: "Kinesis.GetRecords", Code: code}, {Op: "Kinesis.GetRecords", Code: code}}})
	it2 := rd2.Iterator(shards[0].ID, seqs[0])
	_, err = it2.Next(ctx)
	var te *feed.ThrottledError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 3, te.Attempts)
	assert.Contains(t, err.Error(), "5 GetRecords calls")
	b, err = it2.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, seqs[1:], seqsOf(b.Records), "after the error, reading goes on from the position kept")
}

func TestK2_GetRecordsPacedToFiveCallsPerShardPerSecond(t *testing.T) {
	e := startK(t)
	put(t, e.kc, "k", "a", 0, 6)
	ctx := context.Background()
	rd, err := kfeed.Open(ctx, e.kc, "k", kfeed.Options{BatchSize: 1, PollInterval: time.Millisecond})
	require.NoError(t, err)
	shards, err := rd.Shards(ctx)
	require.NoError(t, err)
	it := rd.Iterator(shards[0].ID, "")
	n := 0
	for n < 6 {
		b, err := it.Next(ctx)
		require.NoError(t, err)
		n += len(b.Records)
	}
	ts := e.calls.get()
	require.GreaterOrEqual(t, len(ts), 6)
	// The reader starts a call 200 ms after the one before; the transport
	// sees each start later by the client's own work before it (signing,
	// middleware), which a loaded machine stretches for one call and not
	// the next. So a single gap may look shorter by that work, but never
	// near an unpaced read's few milliseconds, and the calls' whole span
	// is short of 200 ms a gap by at most the first call's delay.
	for i := 1; i < len(ts); i++ {
		assert.GreaterOrEqual(t, ts[i].Sub(ts[i-1]), 100*time.Millisecond, "GetRecords call %d came %s after the one before", i, ts[i].Sub(ts[i-1]))
	}
	span, want := ts[len(ts)-1].Sub(ts[0]), time.Duration(len(ts)-1)*200*time.Millisecond
	assert.GreaterOrEqual(t, span, want-100*time.Millisecond, "%d GetRecords calls in %s: more than five a second", len(ts), span)
}

func TestK2_ExpiredIteratorRenewed(t *testing.T) {
	e := startK(t)
	seqs := put(t, e.kc, "k", "a", 0, 3)
	ctx := context.Background()
	rt := &retries{}
	rd, err := kfeed.Open(ctx, e.kc, "k", kfeed.Options{BatchSize: 2, OnRetry: rt.note, ReadsPerSecond: -1})
	require.NoError(t, err)
	shards, err := rd.Shards(ctx)
	require.NoError(t, err)
	it := rd.Iterator(shards[0].ID, "")
	b, err := it.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, seqs[:2], seqsOf(b.Records))

	e.clock.Jump(6 * time.Minute) // Kinesis's iterators last 5 minutes
	seqs = append(seqs, put(t, e.kc, "k", "a", 3, 2)...)
	var got []string
	for len(got) < 3 {
		b, err = it.Next(ctx)
		require.NoError(t, err)
		got = append(got, seqsOf(b.Records)...)
	}
	assert.Equal(t, seqs[2:], got, "renewed at the position: nothing lost, nothing repeated")
	assert.Equal(t, []string{"GetRecords#1 ExpiredIteratorException"}, rt.get())
}

func TestK2_CheckpointTrimmedPastRetentionIsTypedError(t *testing.T) {
	e := startK(t)
	seqs := put(t, e.kc, "k", "a", 0, 2)
	ctx := context.Background()
	rd, err := kfeed.Open(ctx, e.kc, "k", kfeed.Options{ReadsPerSecond: -1})
	require.NoError(t, err)
	shards, err := rd.Shards(ctx)
	require.NoError(t, err)

	// a checkpoint still kept reads on
	b, err := rd.Iterator(shards[0].ID, seqs[0]).Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, seqs[1:], seqsOf(b.Records))

	e.clock.Jump(25 * time.Hour) // past the 24 h retention: both records trimmed
	later := put(t, e.kc, "k", "a", 2, 1)
	it := rd.Iterator(shards[0].ID, seqs[0])
	_, err = it.Next(ctx)
	var te *feed.TrimmedError
	require.ErrorAs(t, err, &te)
	assert.ErrorIs(t, err, feed.ErrTrimmed)
	assert.False(t, te.Gone)
	assert.Equal(t, seqs[0], te.Position.SequenceNumber)

	it.Seek("") // the caller's choice: read on from the oldest record kept
	b, err = it.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, later, seqsOf(b.Records))
}

func TestK2_SeqLessComparesByValue(t *testing.T) {
	assert.True(t, kfeed.SeqLess("9", "10"))
	assert.True(t, kfeed.SeqLess("49590338271490256608559692538361571095921575989136588898", "49590338271490256608559692540925702759324208523137515618"))
	assert.False(t, kfeed.SeqLess("10", "9"))
	assert.False(t, kfeed.SeqLess("007", "7"))
}

// A drained shard's children are those GetRecords named (ChildShards):
// both halves of a split, and a merge's child with both its parents; no
// listing is needed for them.
func TestK2_DrainedShardsChildrenFromGetRecords(t *testing.T) {
	e := startK(t) // stream "k" of one shard
	ctx := context.Background()
	put(t, e.kc, "k", "a", 0, 2)
	rd, err := kfeed.Open(ctx, e.kc, "k", kfeed.Options{ReadsPerSecond: -1})
	require.NoError(t, err)
	shards, err := rd.Shards(ctx)
	require.NoError(t, err)
	parent := shards[0].ID
	halves, err := e.srv.SplitKinesisShard(ctx, "k", parent)
	require.NoError(t, err)
	merged, err := e.srv.MergeKinesisShards(ctx, "k", halves[0], halves[1])
	require.NoError(t, err)

	drain := func(id string) {
		it := rd.Iterator(id, "")
		for !it.Finished() {
			_, err := it.Next(ctx)
			require.NoError(t, err)
		}
	}
	drain(parent)
	lists := e.lists.Load()
	kids, err := rd.Children(ctx, parent)
	require.NoError(t, err)
	assert.Equal(t, halves, []string{kids[0].ID, kids[1].ID})
	drain(halves[0])
	kids, err = rd.Children(ctx, halves[0])
	require.NoError(t, err)
	require.Len(t, kids, 1)
	assert.Equal(t, merged, kids[0].ID)
	assert.ElementsMatch(t, halves, kids[0].Parents(), "the merged shard has both halves as parents")
	assert.Equal(t, lists, e.lists.Load(), "no ListShards call: GetRecords named the children")

	// the listing names the same lineage
	all, err := rd.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, all, 4)
	assert.ElementsMatch(t, halves, all[3].Parents())
	ready := feed.Ready(all, map[string]bool{parent: true, halves[0]: true})
	require.Len(t, ready, 1, "the merged shard waits for its second parent")
	assert.Equal(t, halves[1], ready[0].ID)
	assert.Equal(t, merged, feed.Ready(all, map[string]bool{parent: true, halves[0]: true, halves[1]: true})[0].ID)
}
