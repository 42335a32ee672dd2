package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"

	"github.com/dynafold/dynafold/host/streamsdk"
)

// readFeed reads every record of a table's stream, shard by shard, parents
// before children.
func readFeed(ctx context.Context, sc *dynamodbstreams.Client, streamArn string) ([]host.Record, error) {
	var shards []stypes.Shard
	var start *string
	for {
		out, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(streamArn), ExclusiveStartShardId: start})
		if err != nil {
			return nil, fmt.Errorf("DescribeStream: %w", err)
		}
		shards = append(shards, out.StreamDescription.Shards...)
		if start = out.StreamDescription.LastEvaluatedShardId; start == nil {
			break
		}
	}
	var all []host.Record
	for _, sh := range lineage(shards) {
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(streamArn), ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return nil, fmt.Errorf("GetShardIterator: %w", err)
		}
		iter := it.ShardIterator
		for iter != nil {
			out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				return nil, fmt.Errorf("GetRecords: %w", err)
			}
			recs, err := streamsdk.Records(out.Records)
			if err != nil {
				return nil, err
			}
			all = append(all, recs...)
			if len(out.Records) == 0 && sh.SequenceNumberRange.EndingSequenceNumber == nil {
				break // an open shard read to its end
			}
			iter = out.NextShardIterator
		}
	}
	return all, nil
}

// lineage orders shards parents first.
func lineage(shards []stypes.Shard) []stypes.Shard {
	byID := map[string]bool{}
	for _, s := range shards {
		byID[aws.ToString(s.ShardId)] = true
	}
	var out []stypes.Shard
	done := map[string]bool{}
	for len(out) < len(shards) {
		progressed := false
		for _, s := range shards {
			id, parent := aws.ToString(s.ShardId), aws.ToString(s.ParentShardId)
			if done[id] || (parent != "" && byID[parent] && !done[parent]) {
				continue
			}
			done[id] = true
			out = append(out, s)
			progressed = true
		}
		if !progressed {
			break
		}
	}
	return out
}

// replayStats counts what the replay did.
type replayStats struct {
	batches, deliveries, redelivered, failedRecords atomic.Int64
}

// replay delivers records as a Lambda event source mapping with
// ParallelizationFactor lanes would: each item's records on one lane (by key
// hash), batches of up to batchSize in shard order, each batch shuffled, some
// batches delivered twice, and a batch with failures retried from its lowest
// failed record.
func replay(ctx context.Context, h *host.Host, records []host.Record, lanes, batchSize int, seed uint64, st *replayStats) error {
	perLane := make([][]host.Record, lanes)
	for _, r := range records {
		f := fnv.New32a()
		for _, k := range sortedKeys(r.DynamoDB.Keys) {
			f.Write([]byte(k + "=" + r.DynamoDB.Keys[k].Str + ";"))
		}
		l := int(f.Sum32() % uint32(lanes))
		perLane[l] = append(perLane[l], r)
	}
	var wg sync.WaitGroup
	errs := make([]error, lanes)
	for l := range perLane {
		wg.Add(1)
		go func(l int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(l)))
			recs := perLane[l]
			for len(recs) > 0 {
				n := min(len(recs), 1+rng.IntN(batchSize))
				batch := append([]host.Record(nil), recs[:n]...)
				rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
				next, err := deliver(ctx, h, batch, st)
				if err != nil {
					errs[l] = err
					return
				}
				if rng.IntN(10) == 0 { // a redelivery of the whole batch
					st.redelivered.Add(int64(n))
					if _, err := deliver(ctx, h, batch, st); err != nil {
						errs[l] = err
						return
					}
				}
				// Retry from the lowest failed record, as Lambda does with
				// ReportBatchItemFailures.
				for tries := 0; len(next) > 0; tries++ {
					if tries == 10 {
						errs[l] = fmt.Errorf("lane %d: records still failing after 10 retries", l)
						return
					}
					st.redelivered.Add(int64(len(next)))
					if next, err = deliver(ctx, h, next, st); err != nil {
						errs[l] = err
						return
					}
				}
				recs = recs[n:]
			}
		}(l)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// deliver runs one batch and returns the records to redeliver: from the
// lowest failed one on, in batch order.
func deliver(ctx context.Context, h *host.Host, batch []host.Record, st *replayStats) ([]host.Record, error) {
	st.batches.Add(1)
	st.deliveries.Add(int64(len(batch)))
	res, err := h.ProcessBatch(ctx, batch)
	if err != nil {
		return nil, err
	}
	failed := res.Failed()
	if len(failed) == 0 {
		return nil, nil
	}
	st.failedRecords.Add(int64(len(failed)))
	return batch[failed[0]:], nil
}

func sortedKeys(it map[string]abi.Value) []string {
	ks := make([]string, 0, len(it))
	for k := range it {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
