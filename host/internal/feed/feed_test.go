package feed_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
)

func TestC1_ReadyStartsChildrenOnlyAfterTheirParents(t *testing.T) {
	shards := []feed.Shard{
		{ID: "a"},                   // root
		{ID: "b", ParentID: "a"},    // child of a
		{ID: "c", ParentID: "b"},    // grandchild
		{ID: "d", ParentID: "gone"}, // parent trimmed away: nothing to wait for
	}
	ids := func(s []feed.Shard) (out []string) {
		for _, x := range s {
			out = append(out, x.ID)
		}
		return out
	}
	assert.Equal(t, []string{"a", "d"}, ids(feed.Ready(shards, nil)))
	assert.Equal(t, []string{"b", "d"}, ids(feed.Ready(shards, map[string]bool{"a": true})))
	assert.Equal(t, []string{"c"}, ids(feed.Ready(shards, map[string]bool{"a": true, "b": true, "d": true})))
	assert.Empty(t, feed.Ready(shards, map[string]bool{"a": true, "b": true, "c": true, "d": true}))
}

func TestC1_EveryRecordOnceAcrossShardRolloverParentsFirst(t *testing.T) {
	// several open shards (the default), each rolling over every 3 records
	e := start(t, ddblocal.StreamOptions{ShardMaxRecords: 3})
	const keys, writes = 10, 3
	for v := 1; v <= writes; v++ {
		for k := 0; k < keys; k++ {
			e.put(t, fmt.Sprintf("k%02d", k), v)
		}
	}
	ctx := context.Background()
	r := e.reader(3)
	log := readAll(t, ctx, r)

	closed := 0
	for _, sh := range log.shards {
		if sh.Closed() {
			closed++
		}
	}
	require.GreaterOrEqual(t, closed, 6, "the stream rolled over to several shards")

	// exactly once
	require.Len(t, log.records, keys*writes)
	once := map[string]bool{}
	for _, s := range seqs(log.records) {
		require.False(t, once[s], "sequence number %s delivered twice", s)
		once[s] = true
	}
	// each item's writes in order
	last := map[string]int{}
	for _, rec := range log.records {
		pk := rec.DynamoDB.NewImage["pk"].Str
		v, _ := strconv.Atoi(rec.DynamoDB.NewImage["v"].Str)
		require.Equal(t, last[pk]+1, v, "%s out of order", label(rec))
		last[pk] = v
	}
	// a child is started only once its parent is finished, and every record
	// of a child comes after every record of its parent
	parent := map[string]string{}
	for _, sh := range log.shards {
		parent[sh.ID] = sh.ParentID
	}
	pos := map[string]int{}
	for i, id := range log.started {
		pos[id] = i
	}
	for _, id := range log.started {
		p := parent[id]
		if p == "" {
			continue
		}
		if _, listed := parent[p]; !listed {
			continue
		}
		fin, ok := log.finishedAt[p]
		require.True(t, ok, "shard %s read but its parent %s never finished", id, p)
		require.Less(t, pos[p], pos[id])
		for i, rec := range log.records {
			if log.shardOf[rec.DynamoDB.SequenceNumber] == id {
				require.GreaterOrEqual(t, i, fin, "record of %s before its parent %s finished", id, p)
			}
		}
	}
	// within a shard, records come in sequence-number order
	lastIn := map[string]string{}
	for _, rec := range log.records {
		sh, seq := log.shardOf[rec.DynamoDB.SequenceNumber], rec.DynamoDB.SequenceNumber
		if prev, ok := lastIn[sh]; ok {
			require.True(t, seqLess(prev, seq), "shard %s: %s after %s", sh, seq, prev)
		}
		lastIn[sh] = seq
	}
	open := 0
	for _, sh := range log.shards {
		if !sh.Closed() {
			open++
		}
	}
	require.Equal(t, 4, open, "four shards take records at once")

	// nothing new: another pass from the same reader's start finds all again,
	// and once more writes land, they come from an open shard
	e.put(t, "late", 1)
	log2 := readAll(t, ctx, r)
	require.Len(t, log2.records, keys*writes+1)
	late := slices.IndexFunc(log2.records, func(r host.Record) bool { return label(r) == "late=1" })
	require.GreaterOrEqual(t, late, 0, "the late record is read")
	for _, sh := range log2.shards {
		if sh.ID == log2.shardOf[log2.records[late].DynamoDB.SequenceNumber] {
			require.False(t, sh.Closed(), "the late record is in an open shard")
		}
	}
}

func TestC2_ResumeFromCheckpointAndRewindToAFailedRecord(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 10}) // one shard's iterator
	for i := 0; i < 14; i++ {
		e.put(t, fmt.Sprintf("k%02d", i), 1)
	}
	ctx := context.Background()
	r := e.reader(4, func(o *feed.Options) { o.PollInterval = 150 * time.Millisecond })
	shards, err := r.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, shards, 2)
	closed, open := shards[0], shards[1]
	require.True(t, closed.Closed())
	require.False(t, open.Closed())
	require.Equal(t, closed.ID, open.ParentID)

	// all of the closed shard, from TRIM_HORIZON
	all := func(id string) []string {
		it := r.Iterator(id, "")
		var out []string
		for {
			b, err := it.Next(ctx)
			require.NoError(t, err)
			out = append(out, seqs(b.Records)...)
			if b.Finished || len(b.Records) == 0 {
				return out
			}
		}
	}
	want := all(closed.ID)
	require.Len(t, want, 10)

	// resume after a checkpoint: exactly the records after it
	it := r.Iterator(closed.ID, want[3])
	b, err := it.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, want[4:8], seqs(b.Records))
	assert.False(t, b.Finished)
	assert.Equal(t, want[7], b.Last())
	assert.Equal(t, feed.Position{SequenceNumber: want[7]}, it.Position())

	// records 4..7 were delivered, 5 failed: Rewind redelivers 5 and after
	it.Rewind(want[5])
	assert.Equal(t, feed.Position{SequenceNumber: want[5], Inclusive: true}, it.Position())
	b, err = it.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, want[5:9], seqs(b.Records))
	b, err = it.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, want[9:], seqs(b.Records))
	assert.True(t, b.Finished, "the closed shard's last records")
	assert.True(t, it.Finished())

	// a failure in the shard's last batch: Rewind undoes Finished
	it.Rewind(want[8])
	assert.False(t, it.Finished())
	b, err = it.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, want[8:], seqs(b.Records))
	assert.True(t, b.Finished)
	b, err = it.Next(ctx) // finished: nothing more, no call
	require.NoError(t, err)
	assert.Empty(t, b.Records)
	assert.True(t, b.Finished)

	// Seek continues after a sequence number
	it.Seek(want[1])
	b, err = it.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, want[2:6], seqs(b.Records))

	// the open child: its 4 records, then empty batches, the second of
	// which waits the poll interval first
	it = r.Iterator(open.ID, "")
	b, err = it.Next(ctx)
	require.NoError(t, err)
	require.Len(t, b.Records, 4)
	b, err = it.Next(ctx)
	require.NoError(t, err)
	assert.Empty(t, b.Records)
	assert.False(t, b.Finished)
	t0 := time.Now()
	b, err = it.Next(ctx)
	require.NoError(t, err)
	assert.Empty(t, b.Records)
	assert.GreaterOrEqual(t, time.Since(t0), 150*time.Millisecond, "an empty batch of an open shard waits the poll interval before the next call")
	e.put(t, "new", 1)
	b, err = it.Next(ctx)
	require.NoError(t, err)
	require.Len(t, b.Records, 1)
	assert.Equal(t, "new=1", label(b.Records[0]))
}

func TestC1_ExpiredIteratorIsRenewedWithoutLossOrRepeat(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1, IteratorTTL: time.Minute}) // one shard's iterator
	for i := 0; i < 7; i++ {
		e.put(t, fmt.Sprintf("k%02d", i), 1)
	}
	ctx := context.Background()
	renewals := 0
	r := e.reader(2, func(o *feed.Options) {
		o.OnRetry = func(op string, _ int, err error) {
			if op == "GetRecords" && err != nil {
				renewals++
			}
		}
	})
	shards, err := r.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, shards, 1)

	it := r.Iterator(shards[0].ID, "")
	var got []string
	for i := 0; i < 4; i++ {
		b, err := it.Next(ctx)
		require.NoError(t, err)
		got = append(got, seqs(b.Records)...)
		e.clock.Jump(2 * time.Minute) // past the iterator's TTL
	}
	b, err := it.Next(ctx)
	require.NoError(t, err)
	assert.Empty(t, b.Records)
	assert.Equal(t, 4, e.api.errors("GetRecords/ExpiredIteratorException"), "every iterator held past its TTL expired")
	assert.Equal(t, 4, renewals)

	// the same as one uninterrupted read
	var want []string
	it = r.Iterator(shards[0].ID, "")
	for {
		b, err := it.Next(ctx)
		require.NoError(t, err)
		if len(b.Records) == 0 {
			break
		}
		want = append(want, seqs(b.Records)...)
	}
	require.Len(t, want, 7)
	assert.Equal(t, want, got)
}

func TestC1_TrimmedDataIsErrTrimmedNamingShardAndSequenceNumber(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1, Retention: time.Minute}) // one shard's iterator
	for i := 0; i < 5; i++ {
		e.put(t, fmt.Sprintf("k%02d", i), 1)
	}
	ctx := context.Background()
	r := e.reader(2)
	shards, err := r.Shards(ctx)
	require.NoError(t, err)
	shard := shards[0].ID
	held := r.Iterator(shard, "")
	b, err := held.Next(ctx)
	require.NoError(t, err)
	require.Len(t, b.Records, 2)
	ckpt := b.Last()

	e.clock.Jump(2 * time.Minute) // records 2..4 pass retention unread

	// an iterator held across the trim (GetRecords)
	_, err = held.Next(ctx)
	require.ErrorIs(t, err, feed.ErrTrimmed)
	var te *feed.TrimmedError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, shard, te.Shard)
	assert.Equal(t, ckpt, te.Position.SequenceNumber)
	assert.False(t, te.Gone)
	assert.Contains(t, err.Error(), shard)
	assert.Contains(t, err.Error(), ckpt)
	assert.Contains(t, err.Error(), "TrimmedDataAccessException")
	assert.Contains(t, err.Error(), "rebuild")

	// a restart from the checkpoint (GetShardIterator AFTER_SEQUENCE_NUMBER)
	it := r.Iterator(shard, ckpt)
	_, err = it.Next(ctx)
	require.ErrorAs(t, err, &te)
	assert.Equal(t, shard, te.Shard)
	assert.Equal(t, ckpt, te.Position.SequenceNumber)
	_, err = it.Next(ctx) // the position is kept: still trimmed
	require.ErrorIs(t, err, feed.ErrTrimmed)

	// the caller's policy: skip to what is left
	e.put(t, "after", 1)
	it.Seek("")
	b, err = it.Next(ctx)
	require.NoError(t, err)
	require.Len(t, b.Records, 1)
	assert.Equal(t, "after=1", label(b.Records[0]))
}

func TestC1_ShardTrimmedAwayIsGoneAndItsChildIsReady(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 2, Retention: time.Minute}) // one lineage
	for i := 0; i < 3; i++ {
		e.put(t, fmt.Sprintf("k%02d", i), 1)
	}
	ctx := context.Background()
	r := e.reader(10)
	before, err := r.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, before, 2)
	e.clock.Jump(2 * time.Minute)
	e.put(t, "fresh", 1) // the open shard stays: only empty closed shards go

	after, err := r.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, after, 1, "the closed parent, all of it past retention, is no longer listed")
	require.Equal(t, before[0].ID, after[0].ParentID)
	require.Equal(t, []feed.Shard{after[0]}, feed.Ready(after, nil), "a child whose parent is gone may start")

	_, err = r.Iterator(before[0].ID, "").Next(ctx)
	var te *feed.TrimmedError
	require.ErrorAs(t, err, &te)
	assert.True(t, te.Gone)
	assert.Equal(t, before[0].ID, te.Shard)
	assert.Contains(t, err.Error(), "no longer exists")

	b, err := r.Iterator(after[0].ID, "").Next(ctx)
	require.NoError(t, err)
	require.Len(t, b.Records, 1)
	assert.Equal(t, "fresh=1", label(b.Records[0]))
}

func TestC1_ThrottlingIsRetried(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{ShardMaxRecords: 5})
	for i := 0; i < 23; i++ {
		e.put(t, fmt.Sprintf("k%02d", i), 1)
	}
	ctx := context.Background()
	e.Server.SetFaults(ddblocal.FaultConfig{
		Seed: 7,
		Script: []ddblocal.ScriptedFault{
			{Op: "DynamoDBStreams.DescribeStream", Code: "LimitExceededException"},
			{Op: "DynamoDBStreams.GetShardIterator", Code: "LimitExceededException"},
			{Op: "DynamoDBStreams.GetRecords", Code: ddblocal.FaultThroughput},
			{Op: "DynamoDBStreams.GetRecords", Code: ddblocal.FaultThrottling},
		},
		Rates: map[string]map[string]float64{
			"DynamoDBStreams.GetRecords":       {ddblocal.FaultThroughput: 0.3},
			"DynamoDBStreams.GetShardIterator": {"LimitExceededException": 0.2},
		},
	})
	retries := map[string]int{}
	r := e.reader(3, func(o *feed.Options) {
		o.OnRetry = func(op string, _ int, _ error) { retries[op]++ }
	})
	log := readAll(t, ctx, r)
	require.Len(t, log.records, 23)
	once := map[string]bool{}
	for _, s := range seqs(log.records) {
		require.False(t, once[s], "sequence number %s delivered twice", s)
		once[s] = true
	}
	assert.GreaterOrEqual(t, e.api.errors("GetRecords/ProvisionedThroughputExceededException"), 2)
	assert.Equal(t, 1, e.api.errors("GetRecords/ThrottlingException"))
	assert.GreaterOrEqual(t, e.api.errors("DescribeStream/LimitExceededException"), 1)
	assert.GreaterOrEqual(t, e.api.errors("GetShardIterator/LimitExceededException"), 1)
	assert.Equal(t, e.api.errors("GetRecords/ProvisionedThroughputExceededException")+1, retries["GetRecords"])
	assert.GreaterOrEqual(t, retries["DescribeStream"], 1)

	// a bound on retries ends in a ThrottledError that says what to do
	e.Server.SetFaults(ddblocal.FaultConfig{Rates: map[string]map[string]float64{"DynamoDBStreams.GetRecords": {ddblocal.FaultThroughput: 1}}})
	r = e.reader(3, func(o *feed.Options) { o.MaxThrottleRetries = 2 })
	_, err := r.Iterator(log.shards[len(log.shards)-1].ID, "").Next(ctx)
	var th *feed.ThrottledError
	require.ErrorAs(t, err, &th)
	assert.Equal(t, "GetRecords", th.Op)
	assert.Equal(t, 3, th.Attempts)
	assert.Contains(t, err.Error(), "ProvisionedThroughputExceededException")
	assert.Contains(t, err.Error(), "fewer readers")

	// a cancelled context ends the retries
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	r = e.reader(3)
	_, err = r.Iterator(log.shards[len(log.shards)-1].ID, "").Next(cctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestC1_LatestStreamNamesTheTableWithoutOne(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{})
	plain := e.Table(t, "plain", false)
	_, err := feed.LatestStream(context.Background(), e.api, plain)
	require.Error(t, err)
	assert.Contains(t, err.Error(), plain)
	assert.Contains(t, err.Error(), "has no stream")
	assert.Contains(t, e.arn, e.table, "the stream of the table with one")
}
