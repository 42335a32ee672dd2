// Package kfeed reads a Kinesis data stream a DynamoDB table streams its
// changes to (Kinesis Data Streams for DynamoDB), shard by shard, as
// package feed reads a DynamoDB stream, and through the same types: shards
// with their lineage (feed.Shard; Kinesis merges shards too, so a shard
// may have two parents), batches of host.Record (feed.Batch) whose
// sequence numbers are the Kinesis records' (the checkpoints), and the
// same typed errors (feed.TrimmedError, feed.ThrottledError).
//
// Kinesis specifics it handles: ListShards, paginated, and with a shard
// filter to find a closed shard's children; GetRecords' ChildShards when a
// closed shard is drained (and listing when a server does not fill them);
// MillisBehindLatest as the batch's Behind; Kinesis's 5 GetRecords calls
// per second per shard, kept by pacing the calls, and
// ProvisionedThroughputExceededException retried with a growing delay;
// expired iterators renewed at the position; records trimmed past the
// retention period before they were read reported as feed.TrimmedError.
//
// Each record's data is the DynamoDB change record as JSON, decoded with
// the host's Kinesis decoder. The same change may arrive twice, and out of
// order: the host takes order from the event store, not the feed.
package kfeed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/internal/backoff"
)

// API is the part of the Kinesis client the reader calls; *kinesis.Client
// implements it.
type API interface {
	DescribeStreamSummary(ctx context.Context, in *kinesis.DescribeStreamSummaryInput, optFns ...func(*kinesis.Options)) (*kinesis.DescribeStreamSummaryOutput, error)
	ListShards(ctx context.Context, in *kinesis.ListShardsInput, optFns ...func(*kinesis.Options)) (*kinesis.ListShardsOutput, error)
	GetShardIterator(ctx context.Context, in *kinesis.GetShardIteratorInput, optFns ...func(*kinesis.Options)) (*kinesis.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *kinesis.GetRecordsInput, optFns ...func(*kinesis.Options)) (*kinesis.GetRecordsOutput, error)
}

var _ API = (*kinesis.Client)(nil)

// Defaults of Options.
const (
	// DefaultBatchSize is GetRecords' Limit when Options.BatchSize is 0.
	DefaultBatchSize = 1000
	// MaxBatchSize is Kinesis's largest GetRecords Limit.
	MaxBatchSize = 10000
	// DefaultReadsPerSecond is Kinesis's limit of GetRecords calls per
	// shard per second, which the reader keeps by default.
	DefaultReadsPerSecond = 5
)

// Options tunes a Reader; the zero value takes the defaults.
type Options struct {
	// BatchSize is GetRecords' Limit, 1..10000 (default 1000).
	BatchSize int
	// PollInterval is how long Next waits, after an empty batch of an open
	// shard, before it calls GetRecords again (default 1 s).
	PollInterval time.Duration
	// ReadsPerSecond bounds the GetRecords calls on one shard per second
	// (default 5, Kinesis's limit): consecutive calls of an iterator are
	// at least 1/ReadsPerSecond apart. Negative: no bound.
	ReadsPerSecond int
	// Backoff is the delay between retries of a throttled call (default
	// feed.DefaultBackoff).
	Backoff backoff.Policy
	// MaxThrottleRetries bounds the retries of one throttled call; 0
	// retries until the context ends. Past it the call fails with a
	// *feed.ThrottledError.
	MaxThrottleRetries int
	// OnRetry, when set, is called before each retry of a throttled call
	// and each renewal of an expired iterator.
	OnRetry func(op string, attempt int, err error)
}

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	o.BatchSize = min(o.BatchSize, MaxBatchSize)
	if o.PollInterval <= 0 {
		o.PollInterval = feed.DefaultPollInterval
	}
	if o.ReadsPerSecond == 0 {
		o.ReadsPerSecond = DefaultReadsPerSecond
	}
	if o.Backoff == (backoff.Policy{}) {
		o.Backoff = feed.DefaultBackoff
	}
	return o
}

// gap is the least time between two GetRecords calls of one iterator.
func (o Options) gap() time.Duration {
	if o.ReadsPerSecond < 0 {
		return 0
	}
	return time.Second / time.Duration(o.ReadsPerSecond)
}

// Reader reads one Kinesis data stream.
type Reader struct {
	api  API
	name string // the stream's name: every call names it so (kinesalite refuses an ARN alone)
	arn  string
	opts Options

	mu   sync.Mutex
	kids map[string][]feed.Shard // children GetRecords named (ChildShards), by parent
}

// Open resolves stream (a name or an ARN) with DescribeStreamSummary and
// returns a reader of it through api (a *kinesis.Client).
func Open(ctx context.Context, api API, stream string, opts Options) (*Reader, error) {
	name := StreamName(stream)
	var out *kinesis.DescribeStreamSummaryOutput
	r := &Reader{api: api, name: name, opts: opts.withDefaults(), kids: map[string][]feed.Shard{}}
	err := r.retry(ctx, "DescribeStreamSummary", func() (err error) {
		out, err = api.DescribeStreamSummary(ctx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
		return err
	})
	var rnf *ktypes.ResourceNotFoundException
	switch {
	case errors.As(err, &rnf):
		return nil, fmt.Errorf("kinesis: the Kinesis data stream %s does not exist: create it and make it the event table's streaming destination (`host tables create` does both), or fix sidecar.kinesis.stream: %w", stream, err)
	case err != nil:
		return nil, fmt.Errorf("kinesis: describing the Kinesis data stream %s (DescribeStreamSummary): %w", stream, err)
	}
	r.arn = aws.ToString(out.StreamDescriptionSummary.StreamARN)
	return r, nil
}

// StreamName is the name of a stream given by name or ARN.
func StreamName(stream string) string {
	if i := strings.LastIndex(stream, ":stream/"); i >= 0 && strings.HasPrefix(stream, "arn:") {
		return stream[i+len(":stream/"):]
	}
	return stream
}

// StreamArn is the ARN of the stream read.
func (r *Reader) StreamArn() string { return r.arn }

// Shards lists the stream's shards (ListShards, every page), parents
// before children as Kinesis lists them. Throttled calls are retried.
func (r *Reader) Shards(ctx context.Context) ([]feed.Shard, error) {
	out, err := r.list(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("kinesis: listing the shards of stream %s (ListShards): %w", r.arn, err)
	}
	return out, nil
}

// Children lists the shards that continue a closed shard: two after a
// split, one after a merge (whose other parent is its
// AdjacentParentID). Those GetRecords named when it drained the shard
// (ChildShards) are taken as they are; else the shards listed after it
// (ListShards with the AFTER_SHARD_ID filter: a child's id is always
// greater than its parents') whose parents name it. None while it is open.
func (r *Reader) Children(ctx context.Context, parentID string) ([]feed.Shard, error) {
	r.mu.Lock()
	kids, ok := r.kids[parentID]
	r.mu.Unlock()
	if ok {
		return kids, nil
	}
	all, err := r.list(ctx, &ktypes.ShardFilter{Type: ktypes.ShardFilterTypeAfterShardId, ShardId: aws.String(parentID)})
	if err != nil {
		return nil, fmt.Errorf("kinesis: listing the children of shard %s of stream %s (ListShards, AFTER_SHARD_ID): %w", parentID, r.arn, err)
	}
	for _, s := range all {
		if s.ParentID == parentID || s.AdjacentParentID == parentID {
			kids = append(kids, s)
		}
	}
	return kids, nil
}

// noteChildren keeps the children GetRecords named for a drained shard.
func (r *Reader) noteChildren(parent string, cs []ktypes.ChildShard) {
	kids := make([]feed.Shard, 0, len(cs))
	for _, c := range cs {
		s := feed.Shard{ID: aws.ToString(c.ShardId)}
		for _, p := range c.ParentShards {
			switch {
			case s.ParentID == "":
				s.ParentID = p
			case s.AdjacentParentID == "" && p != s.ParentID:
				s.AdjacentParentID = p
			}
		}
		kids = append(kids, s)
	}
	r.mu.Lock()
	r.kids[parent] = kids
	r.mu.Unlock()
}

func (r *Reader) list(ctx context.Context, filter *ktypes.ShardFilter) ([]feed.Shard, error) {
	var out []feed.Shard
	in := &kinesis.ListShardsInput{StreamName: aws.String(r.name), ShardFilter: filter}
	for {
		var page *kinesis.ListShardsOutput
		err := r.retry(ctx, "ListShards", func() (err error) {
			page, err = r.api.ListShards(ctx, in)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, s := range page.Shards {
			sh := feed.Shard{ID: aws.ToString(s.ShardId), ParentID: aws.ToString(s.ParentShardId), AdjacentParentID: aws.ToString(s.AdjacentParentShardId)}
			if rg := s.SequenceNumberRange; rg != nil {
				sh.StartingSequenceNumber = aws.ToString(rg.StartingSequenceNumber)
				sh.EndingSequenceNumber = aws.ToString(rg.EndingSequenceNumber)
			}
			out = append(out, sh)
		}
		if page.NextToken == nil || *page.NextToken == "" {
			return out, nil
		}
		in = &kinesis.ListShardsInput{NextToken: page.NextToken} // a NextToken goes alone
	}
}

// Error codes the reader treats specially.
const (
	codeExpired    = "ExpiredIteratorException"
	codeNotFound   = "ResourceNotFoundException"
	codeThroughput = "ProvisionedThroughputExceededException"
	codeLimit      = "LimitExceededException"
	codeKMS        = "KMSThrottlingException"
	codeThrottling = "ThrottlingException"
)

func errorCode(err error) string { return feed.ErrorCode(err) }

func throttled(err error) bool {
	switch errorCode(err) {
	case codeThroughput, codeLimit, codeKMS, codeThrottling:
		return true
	}
	return false
}

// retry runs call, retrying it with a jittered, growing delay while it is
// throttled.
func (r *Reader) retry(ctx context.Context, op string, call func() error) error {
	return feed.Retry(ctx, feed.RetryPolicy{Throttled: throttled, Backoff: r.opts.Backoff, MaxRetries: r.opts.MaxThrottleRetries, OnRetry: r.opts.OnRetry,
		GiveUp: func(attempt int, err error) error {
			return &ThrottledError{feed.ThrottledError{Op: op, Attempts: attempt, Err: err}}
		}}, op, call)
}

// ThrottledError is a Kinesis call still throttled after
// Options.MaxThrottleRetries retries; errors.As finds the
// *feed.ThrottledError inside it too.
type ThrottledError struct{ feed.ThrottledError }

// Error names the call and says what to change.
func (e *ThrottledError) Error() string {
	return fmt.Sprintf("kinesis: %s still throttled after %d attempts: Kinesis allows 5 GetRecords calls and 2 MB per second per shard, shared by every consumer of the stream; "+
		"run fewer consumers of the stream, add shards, or allow more retries: %v", e.Op, e.Attempts, e.Err)
}

// As lets errors.As find the *feed.ThrottledError.
func (e *ThrottledError) As(target any) bool {
	if t, ok := target.(**feed.ThrottledError); ok {
		*t = &e.ThrottledError
		return true
	}
	return false
}
