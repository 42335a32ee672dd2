package ddblocal

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// durabilityKinesisEnv makes the durability child split and merge the
// shards of the Kinesis stream dur-changes at random.
const durabilityKinesisEnv = "DDBLOCAL_DURABILITY_KINESIS"

// TestK3_KillAtRandomPointsLosesNoKinesisRecord is the durability test
// with the table streamed to a Kinesis stream (no faults injected), whose
// shards the child splits and merges at random moments: after every kill,
// every acknowledged write is exactly once in the Kinesis stream, in order
// per item, and a transaction is all there or not at all, as in the
// table's DynamoDB stream.
func TestK3_KillAtRandomPointsLosesNoKinesisRecord(t *testing.T) {
	res := runDurability(t, durabilityCase{cycles: 120, kinesis: true})
	if t.Failed() || testing.Short() {
		return
	}
	kids := map[string]int{}
	merges := 0
	for _, sh := range res.kinesisShards {
		if p := aws.ToString(sh.ParentShardId); p != "" {
			kids[p]++
		}
		if sh.AdjacentParentShardId != nil {
			merges++
		}
	}
	splits := 0
	for _, n := range kids {
		if n == 2 {
			splits++
		}
	}
	t.Logf("the Kinesis stream has %d shards: %d splits, %d merges", len(res.kinesisShards), splits, merges)
	if splits < 3 || merges < 3 {
		t.Errorf("%d splits and %d merges: the run did not exercise them", splits, merges)
	}
}

// setupKinesisDestination creates the Kinesis stream dur-changes and
// makes it table dur's streaming destination.
func setupKinesisDestination(t *testing.T, endpoint string, c *child) {
	t.Helper()
	db, _ := verifyClients(endpoint)
	kc := kinesisVerifyClient(endpoint)
	ctx := ctxT(t)
	if _, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("dur-changes"), ShardCount: aws.Int32(4)}); err != nil {
		c.kill()
		t.Fatalf("CreateStream: %v", err)
	}
	if _, err := db.EnableKinesisStreamingDestination(ctx, &dynamodb.EnableKinesisStreamingDestinationInput{TableName: aws.String("dur"),
		StreamArn: aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/dur-changes")}); err != nil {
		c.kill()
		t.Fatalf("EnableKinesisStreamingDestination: %v", err)
	}
}

// kinesisVerifier is the Kinesis client of a case's verifying reads (nil
// without Kinesis).
func kinesisVerifier(dc durabilityCase, endpoint string) *kinesis.Client {
	if !dc.kinesis {
		return nil
	}
	return kinesisVerifyClient(endpoint)
}

func kinesisVerifyClient(endpoint string) *kinesis.Client {
	return kinesis.New(kinesis.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", ""), Retryer: verifyRetryer(),
		HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: time.Minute}})
}

// restructureKinesisAtRandom, with odds of one in three each, leaves the
// stream dur-changes alone, splits one of its open shards (while fewer
// than 12 are open) or merges two adjacent open ones, at a random moment
// of the child's life.
func restructureKinesisAtRandom(srv *Server) {
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	what := rng.IntN(3)
	if what == 0 {
		return
	}
	time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
	ctx := context.Background()
	shards, err := srv.KinesisShards(ctx, "dur-changes")
	if err != nil {
		return
	}
	var open []KinesisShard
	for _, sh := range shards {
		if sh.Open() {
			open = append(open, sh)
		}
	}
	if len(open) == 0 {
		return
	}
	sort.Slice(open, func(i, j int) bool { return seqLess(open[i].StartingHashKey, open[j].StartingHashKey) })
	switch i := rng.IntN(len(open)); {
	case what == 1 && len(open) < 12:
		_, _ = srv.SplitKinesisShard(ctx, "dur-changes", open[i].ShardID)
	case what == 2 && len(open) > 1:
		if i == len(open)-1 {
			i--
		}
		_, _ = srv.MergeKinesisShards(ctx, "dur-changes", open[i].ShardID, open[i+1].ShardID)
	}
}

// readWholeKinesis reads every record of the stream dur-changes, shard by
// shard in id order (parents before children, so an item's records keep
// their order), each shard in sequence order, and returns the shards too.
func readWholeKinesis(ctx context.Context, kc *kinesis.Client) ([]streamRec, []ktypes.Shard, error) {
	var shards []ktypes.Shard
	in := &kinesis.ListShardsInput{StreamName: aws.String("dur-changes")}
	for {
		ls, err := kc.ListShards(ctx, in)
		if err != nil {
			return nil, nil, fmt.Errorf("ListShards: %w", err)
		}
		shards = append(shards, ls.Shards...)
		if ls.NextToken == nil {
			break
		}
		in = &kinesis.ListShardsInput{NextToken: ls.NextToken}
	}
	sort.Slice(shards, func(i, j int) bool { return aws.ToString(shards[i].ShardId) < aws.ToString(shards[j].ShardId) })
	var out []streamRec
	for _, sh := range shards {
		gi, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("dur-changes"), ShardId: sh.ShardId,
			ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return nil, nil, fmt.Errorf("GetShardIterator %s: %w", aws.ToString(sh.ShardId), err)
		}
		for it := gi.ShardIterator; it != nil; {
			gr, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it})
			if err != nil {
				return nil, nil, fmt.Errorf("GetRecords %s: %w", aws.ToString(sh.ShardId), err)
			}
			for _, r := range gr.Records {
				rec, err := kinesisRecOf(r)
				if err != nil {
					return nil, nil, err
				}
				out = append(out, rec)
			}
			if len(gr.Records) == 0 {
				break
			}
			it = gr.NextShardIterator
		}
	}
	return out, shards, nil
}

// kinesisRecOf is what the durability test keeps of a Kinesis record.
func kinesisRecOf(r ktypes.Record) (streamRec, error) {
	seq, ok := new(big.Int).SetString(aws.ToString(r.SequenceNumber), 10)
	if !ok {
		return streamRec{}, fmt.Errorf("Kinesis record with sequence number %q", aws.ToString(r.SequenceNumber))
	}
	var c ddbChange
	if err := json.Unmarshal(r.Data, &c); err != nil {
		return streamRec{}, fmt.Errorf("Kinesis record %s: %w", seq, err)
	}
	pk, _ := c.Dynamodb.Keys["pk"]["S"].(string)
	if pk == "" {
		return streamRec{}, fmt.Errorf("Kinesis record %s has no pk key: %s", seq, r.Data)
	}
	rec := streamRec{seq: seq, item: pk}
	if c.EventName == "REMOVE" {
		rec.token = "D"
		return rec, nil
	}
	w, _ := c.Dynamodb.NewImage["w"]["S"].(string)
	if w == "" {
		return streamRec{}, fmt.Errorf("%s Kinesis record %s of %s has no NewImage.w", c.EventName, seq, pk)
	}
	rec.token = "P:" + w
	return rec, nil
}
