package ddblocal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// TestK3_ConcurrentWritesReadsSplitsAndMergesKeepEveryRecordOnce hammers a
// persistent server: writers put items of their own (through the table's
// destination) and records (PutRecords), a reader polls every shard, and
// the stream is split and merged at random (60 times at most) meanwhile. Every write is then
// in the stream exactly once, an item's in write order (shards read
// parents first). Run it under -race.
func TestK3_ConcurrentWritesReadsSplitsAndMergesKeepEveryRecordOnce(t *testing.T) {
	srv := startServer(t, Options{DataDir: t.TempDir()})
	db, kc := client(srv, 1), kclient(srv)
	destTable(t, srv, "tbl", 3, "")
	const writers, per = 4, 40
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				putW(t, db, "tbl", fmt.Sprintf("g%d-%d", g, i%3), strconv.Itoa(i))
				if i%10 == 0 {
					if _, err := kc.PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String("tbl-changes"),
						Records: []ktypes.PutRecordsRequestEntry{{PartitionKey: aws.String("p"), Data: []byte(`{"put":true}`)}}}); err != nil {
						t.Errorf("PutRecords: %v", err)
					}
				}
			}
		}()
	}
	var aux sync.WaitGroup
	aux.Add(2)
	go func() { // restructure at random
		defer aux.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for n := 0; n < 60; n++ { // a bound, so a fast machine does not make thousands of shards
			select {
			case <-stop:
				return
			default:
			}
			shards, err := srv.KinesisShards(ctx, "tbl-changes")
			if err != nil {
				t.Errorf("KinesisShards: %v", err)
				return
			}
			var open []KinesisShard
			for _, sh := range shards {
				if sh.Open() {
					open = append(open, sh)
				}
			}
			sort.Slice(open, func(i, j int) bool { return seqLess(open[i].StartingHashKey, open[j].StartingHashKey) })
			i := rng.IntN(len(open))
			if rng.IntN(2) == 0 && len(open) < 10 {
				_, err = srv.SplitKinesisShard(ctx, "tbl-changes", open[i].ShardID)
			} else if len(open) > 1 {
				i = min(i, len(open)-2)
				_, err = srv.MergeKinesisShards(ctx, "tbl-changes", open[i].ShardID, open[i+1].ShardID)
			}
			if err != nil {
				t.Errorf("restructuring: %v", err)
				return
			}
		}
	}()
	go func() { // poll every shard
		defer aux.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ls, err := kc.ListShards(ctx, &kinesis.ListShardsInput{StreamName: aws.String("tbl-changes")})
			if err != nil {
				t.Errorf("ListShards: %v", err)
				return
			}
			for _, sh := range ls.Shards {
				gi, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("tbl-changes"), ShardId: sh.ShardId, ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon})
				if err == nil {
					_, err = kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: gi.ShardIterator})
				}
				if err != nil {
					t.Errorf("reading %s: %v", aws.ToString(sh.ShardId), err)
					return
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	aux.Wait()

	shards := allShards(t, kc, "tbl-changes", nil)
	sort.Slice(shards, func(i, j int) bool { return aws.ToString(shards[i].ShardId) < aws.ToString(shards[j].ShardId) })
	perItem := map[string][]int{}
	puts := 0
	for _, sh := range shards {
		recs, _ := readShard(t, kc, "tbl-changes", aws.ToString(sh.ShardId))
		_, changes := decodeChanges(t, recs)
		for _, c := range changes {
			if c.EventName == "" {
				puts++
				continue
			}
			n, _ := strconv.Atoi(c.Dynamodb.NewImage["w"]["S"].(string))
			k := c.Dynamodb.Keys["pk"]["S"].(string)
			perItem[k] = append(perItem[k], n)
		}
	}
	if puts != writers*per/10 {
		t.Errorf("%d put records, want %d", puts, writers*per/10)
	}
	for g := 0; g < writers; g++ {
		for k := 0; k < 3; k++ {
			item := fmt.Sprintf("g%d-%d", g, k)
			var want []int
			for i := k; i < per; i += 3 {
				want = append(want, i)
			}
			if fmt.Sprint(perItem[item]) != fmt.Sprint(want) {
				t.Errorf("item %s: records %v, want %v", item, perItem[item], want)
			}
		}
	}
	t.Logf("%d shards after the restructurings", len(shards))
}
