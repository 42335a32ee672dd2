package ddblocal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// splitStreamOptions are the stream options of the durability child with
// splits: shards split by themselves after a few records and, once the
// stream has MaxShards open, roll over by record count;
// restructureAtRandom splits or rolls one more at a random moment. Nothing
// depends on a shard's age, so a fast machine exercises rollovers as a
// slow one does.
var splitStreamOptions = StreamOptions{Shards: 4, SplitAfterRecords: 25, MaxShards: 24, ShardMaxRecords: 60}

// restructureAtRandom, with odds of one in three each, leaves the stream of
// table dur alone, splits one of its open shards (unless MaxShards are
// open) or rolls one over, at a random moment of the child's life.
func restructureAtRandom(srv *Server) {
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	what := rng.IntN(3)
	if what == 0 {
		return
	}
	time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
	ctx := context.Background()
	infos, err := srv.StreamShards(ctx, "dur")
	if err != nil {
		return
	}
	var open []string
	for _, in := range infos {
		if in.Open() {
			open = append(open, in.ShardID)
		}
	}
	if len(open) == 0 {
		return
	}
	id := open[rng.IntN(len(open))]
	switch {
	case what == 1 && len(open) < splitStreamOptions.MaxShards:
		_, _ = srv.SplitShard(ctx, "dur", id)
	case what == 2:
		_, _ = srv.RollShard(ctx, "dur", id)
	}
}

// liveReader follows the stream of table dur as a lineage-aware consumer
// does, through the kills of the child: a shard is read once its parent is
// finished, from where it was left, and a shard is finished when GetRecords
// ends it (no NextShardIterator). It remembers what it read and finished,
// so that check can tell whether a crash took any of it back.
type liveReader struct {
	mu       sync.Mutex
	arn      *string
	pos      map[string]string    // shard -> last sequence number read
	finished map[string]string    // shard -> its EndingSequenceNumber when finished
	seen     map[string]streamRec // sequence number -> record
	problems []string
}

func newLiveReader() *liveReader {
	return &liveReader{pos: map[string]string{}, finished: map[string]string{}, seen: map[string]streamRec{}}
}

// follow reads until a call fails (the child was killed).
func (lr *liveReader) follow(sc *dynamodbstreams.Client) {
	ctx := context.Background()
	for lr.pass(ctx, sc) == nil {
		time.Sleep(5 * time.Millisecond) // as a consumer polls, leaving the writers most of the child
	}
}

// pass reads every shard that may be read now, up to its end or to what
// is there.
func (lr *liveReader) pass(ctx context.Context, sc *dynamodbstreams.Client) error {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.arn == nil {
		ls, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String("dur")})
		if err != nil || len(ls.Streams) != 1 {
			return fmt.Errorf("no stream yet: %v", err)
		}
		lr.arn = ls.Streams[0].StreamArn
	}
	shards, err := lr.list(ctx, sc)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, sh := range shards {
		listed[*sh.ShardId] = true
	}
	for _, sh := range shards {
		id, parent := *sh.ShardId, aws.ToString(sh.ParentShardId)
		if _, done := lr.finished[id]; done {
			continue
		}
		if _, done := lr.finished[parent]; parent != "" && listed[parent] && !done {
			continue
		}
		if err := lr.read(ctx, sc, id); err != nil {
			return err
		}
	}
	return nil
}

func (lr *liveReader) list(ctx context.Context, sc *dynamodbstreams.Client) ([]stypes.Shard, error) {
	var out []stypes.Shard
	var start *string
	for {
		d, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: lr.arn, ExclusiveStartShardId: start})
		if err != nil {
			return nil, err
		}
		out = append(out, d.StreamDescription.Shards...)
		if start = d.StreamDescription.LastEvaluatedShardId; start == nil {
			return out, nil
		}
	}
}

func (lr *liveReader) read(ctx context.Context, sc *dynamodbstreams.Client, id string) error {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: lr.arn, ShardId: aws.String(id), ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon}
	if p := lr.pos[id]; p != "" {
		in.ShardIteratorType, in.SequenceNumber = stypes.ShardIteratorTypeAfterSequenceNumber, aws.String(p)
	}
	gi, err := sc.GetShardIterator(ctx, in)
	if err != nil {
		return err
	}
	for iter := gi.ShardIterator; ; {
		gr, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		if err != nil {
			return err
		}
		for _, r := range gr.Records {
			rec, err := streamRecOf(r)
			if err != nil {
				lr.problems = append(lr.problems, err.Error())
				continue
			}
			key := rec.seq.String()
			if old, ok := lr.seen[key]; ok && (old.item != rec.item || old.token != rec.token) {
				lr.problems = append(lr.problems, fmt.Sprintf("sequence number %s read as %s %s, then as %s %s", key, old.item, old.token, rec.item, rec.token))
			}
			lr.seen[key] = rec
			lr.pos[id] = aws.ToString(r.Dynamodb.SequenceNumber)
		}
		if gr.NextShardIterator == nil {
			return lr.finish(ctx, sc, id)
		}
		if len(gr.Records) == 0 {
			return nil
		}
		iter = gr.NextShardIterator
	}
}

// finish records the end of a shard GetRecords ended, as DescribeStream
// shows it now.
func (lr *liveReader) finish(ctx context.Context, sc *dynamodbstreams.Client, id string) error {
	shards, err := lr.list(ctx, sc)
	if err != nil {
		return err
	}
	for _, sh := range shards {
		if *sh.ShardId == id {
			end := sh.SequenceNumberRange.EndingSequenceNumber
			if end == nil {
				lr.problems = append(lr.problems, fmt.Sprintf("GetRecords ended shard %s, which DescribeStream lists open", id))
				return nil
			}
			lr.finished[id] = *end
			return nil
		}
	}
	lr.problems = append(lr.problems, fmt.Sprintf("GetRecords ended shard %s, which DescribeStream does not list", id))
	return nil
}

// check fails the test if a restart took back anything the reader saw: a
// record gone or changed, a finished shard open again or ending elsewhere.
func (lr *liveReader) check(t *testing.T, cycle int, recs []streamRec, shards []stypes.Shard) {
	t.Helper()
	lr.mu.Lock()
	defer lr.mu.Unlock()
	for _, p := range lr.problems {
		t.Errorf("cycle %d: the live reader: %s", cycle, p)
	}
	bySeq := make(map[string]streamRec, len(recs))
	for _, r := range recs {
		bySeq[r.seq.String()] = r
	}
	for seq, r := range lr.seen {
		if now, ok := bySeq[seq]; !ok || now.item != r.item || now.token != r.token {
			t.Errorf("cycle %d: the live reader read record %s (%s %s); after the restarts it is %+v (present %v)", cycle, seq, r.item, r.token, now, ok)
		}
	}
	ends := map[string]*string{}
	for _, sh := range shards {
		ends[*sh.ShardId] = sh.SequenceNumberRange.EndingSequenceNumber
	}
	for id, end := range lr.finished {
		if now, listed := ends[id]; !listed || now == nil || *now != end {
			t.Errorf("cycle %d: the live reader finished shard %s at %s; after the restarts it is listed %v, ending at %v", cycle, id, end, listed, aws.ToString(now))
		}
	}
}

// TestC5_KillAtRandomPointsAcrossShardsAndSplitsLosesNoRecord is the
// durability test on a stream whose shards split by themselves after a few
// records, roll over by count, split and roll over at random moments
// through Server.SplitShard and Server.RollShard, while a lineage-aware reader follows the stream through
// every kill: every acknowledged write is exactly once in the stream, in
// order per item, and nothing the reader saw (a record, a shard it read to
// its end) is taken back by a crash.
func TestC5_KillAtRandomPointsAcrossShardsAndSplitsLosesNoRecord(t *testing.T) {
	shards := runDurability(t, durabilityCase{cycles: 150, splits: true}).shards
	if t.Failed() || testing.Short() {
		return
	}
	kids := map[string]int{}
	for _, sh := range shards {
		if p := aws.ToString(sh.ParentShardId); p != "" {
			kids[p]++
		}
	}
	splits, rollovers := 0, 0
	for _, n := range kids {
		switch n {
		case 1:
			rollovers++
		case 2:
			splits++
		default:
			t.Errorf("a shard with %d children", n)
		}
	}
	t.Logf("%d shards: %d splits, %d rollovers", len(shards), splits, rollovers)
	if splits < 5 || rollovers < 5 {
		t.Errorf("%d splits and %d rollovers: the run did not exercise them", splits, rollovers)
	}
}
