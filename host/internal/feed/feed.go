// Package feed reads a DynamoDB stream directly through the DynamoDB Streams
// API, as the KCL with the DynamoDB Streams adapter does: it lists a
// stream's shards with their lineage, reads one shard from a checkpoint in
// batches of host.Record, renews expired shard iterators, retries throttled
// calls with a jittered, growing delay, and reports trimmed data as a typed
// error so the caller decides what to do about it.
//
// The package reads; it does not decide. Which shards a process owns
// (leases), where checkpoints are stored, and what happens to a batch that
// keeps failing are the caller's (the `host run` change-feed daemon).
//
// A typical loop over one stream:
//
//	r := feed.NewReader(client, streamArn, feed.Options{})
//	shards, _ := r.Shards(ctx)
//	for _, sh := range feed.Ready(shards, finished) {
//		it := r.Iterator(sh.ID, checkpoint[sh.ID])
//		for {
//			b, err := it.Next(ctx) // on ErrTrimmed: the caller's policy
//			// process b.Records; when the record with sequence number s
//			// is the lowest that failed:
//			//	it.Rewind(s); continue // s and the records after it again
//			// else store b.Last() as the shard's checkpoint (if not "")
//			if b.Finished {
//				finished[sh.ID] = true // its children become Ready
//				break
//			}
//		}
//	}
package feed

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"

	"github.com/dynafold/dynafold/internal/backoff"
)

// API is the part of the DynamoDB Streams client the reader calls;
// *dynamodbstreams.Client implements it.
type API interface {
	ListStreams(ctx context.Context, in *dynamodbstreams.ListStreamsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.ListStreamsOutput, error)
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ API = (*dynamodbstreams.Client)(nil)

// Defaults of Options.
const (
	// DefaultBatchSize is GetRecords' Limit when Options.BatchSize is 0
	// (also DynamoDB Streams' maximum).
	DefaultBatchSize = 1000
	// DefaultPollInterval is the wait after an empty batch of an open shard
	// (the KCL adapter's idle time between reads is 1 s too; DynamoDB
	// Streams allows 5 GetRecords calls per shard per second).
	DefaultPollInterval = time.Second
	// MaxIteratorRenewals bounds how often one Next renews an iterator that
	// keeps coming back expired before it gives up.
	MaxIteratorRenewals = 3
)

// DefaultBackoff is the delay between retries of a throttled call when
// Options.Backoff is zero.
var DefaultBackoff = backoff.Policy{Base: 50 * time.Millisecond, Max: 5 * time.Second}

// Options tunes a Reader; the zero value takes the defaults.
type Options struct {
	// BatchSize is GetRecords' Limit, 1..1000 (default 1000).
	BatchSize int
	// PollInterval is how long Next waits, after an empty batch of an open
	// shard, before it calls GetRecords again (default 1 s).
	PollInterval time.Duration
	// Backoff is the jittered, growing delay between retries of a
	// throttled call (default DefaultBackoff).
	Backoff backoff.Policy
	// MaxThrottleRetries bounds the retries of one throttled call; 0
	// retries until the context ends. Past it the call fails with the
	// throttling error wrapped in a *ThrottledError.
	MaxThrottleRetries int
	// OnRetry, when set, is called before each retry of a throttled call
	// and each renewal of an expired iterator (for logs and metrics).
	OnRetry func(op string, attempt int, err error)
}

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 || o.BatchSize > DefaultBatchSize {
		o.BatchSize = DefaultBatchSize
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Backoff == (backoff.Policy{}) {
		o.Backoff = DefaultBackoff
	}
	return o
}

// Reader reads one stream.
type Reader struct {
	api  API
	arn  string
	opts Options
}

// NewReader returns a reader of the stream streamArn through api (a
// *dynamodbstreams.Client).
func NewReader(api API, streamArn string, opts Options) *Reader {
	return &Reader{api: api, arn: streamArn, opts: opts.withDefaults()}
}

// StreamArn is the ARN of the stream the reader reads.
func (r *Reader) StreamArn() string { return r.arn }

// Shard is one shard of a stream as DescribeStream lists it.
type Shard struct {
	// ID is the shard id.
	ID string
	// ParentID is the id of the shard it was split from, "" for none. The
	// parent must be read to its end before this shard (see Ready).
	ParentID string
	// AdjacentParentID is the second parent of a shard two shards were
	// merged into (Kinesis data streams merge shards; DynamoDB streams
	// never do), "" for none. It too must be read to its end first.
	AdjacentParentID string
	// StartingSequenceNumber is the shard's first sequence number.
	StartingSequenceNumber string
	// EndingSequenceNumber is the shard's last sequence number once it is
	// closed, "" while it is open.
	EndingSequenceNumber string
}

// Parents returns the shard's parents: none, one, or two after a merge.
func (s Shard) Parents() []string {
	var out []string
	for _, p := range []string{s.ParentID, s.AdjacentParentID} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Closed reports whether the shard takes no more records (it has an ending
// sequence number). A closed shard is finished once read to its end.
func (s Shard) Closed() bool { return s.EndingSequenceNumber != "" }

// Shards lists the stream's shards (DescribeStream, every page), in the
// order DynamoDB lists them. Throttled calls are retried.
func (r *Reader) Shards(ctx context.Context) ([]Shard, error) {
	return r.describe(ctx, nil)
}

// Children lists the children of shard parentID (DescribeStream with the
// CHILD_SHARDS shard filter, every page): the shards that continue its
// partition once it is closed, one after a rollover, two after a split.
// It is how a reader that finished a shard finds what to read next
// without listing the whole stream. None while the shard is open.
func (r *Reader) Children(ctx context.Context, parentID string) ([]Shard, error) {
	return r.describe(ctx, &stypes.ShardFilter{Type: stypes.ShardFilterTypeChildShards, ShardId: aws.String(parentID)})
}

func (r *Reader) describe(ctx context.Context, filter *stypes.ShardFilter) ([]Shard, error) {
	var out []Shard
	var start *string
	for {
		in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(r.arn), ExclusiveStartShardId: start, ShardFilter: filter}
		var page *dynamodbstreams.DescribeStreamOutput
		err := r.retry(ctx, "DescribeStream", func() (err error) {
			page, err = r.api.DescribeStream(ctx, in)
			return err
		})
		if err != nil {
			if filter != nil {
				return nil, fmt.Errorf("feed: listing the children of shard %s of stream %s (DescribeStream, CHILD_SHARDS): %w", aws.ToString(filter.ShardId), r.arn, err)
			}
			return nil, fmt.Errorf("feed: listing the shards of stream %s (DescribeStream): %w", r.arn, err)
		}
		d := page.StreamDescription
		if d == nil {
			return nil, fmt.Errorf("feed: DescribeStream of %s returned no stream description", r.arn)
		}
		for _, s := range d.Shards {
			sh := Shard{ID: aws.ToString(s.ShardId), ParentID: aws.ToString(s.ParentShardId)}
			if rg := s.SequenceNumberRange; rg != nil {
				sh.StartingSequenceNumber = aws.ToString(rg.StartingSequenceNumber)
				sh.EndingSequenceNumber = aws.ToString(rg.EndingSequenceNumber)
			}
			out = append(out, sh)
		}
		if d.LastEvaluatedShardId == nil || *d.LastEvaluatedShardId == "" {
			return out, nil
		}
		start = d.LastEvaluatedShardId
	}
}

// Ready returns the shards that may be read now, in the given order: those
// not finished whose parents (one, or two after a merge) are each
// finished or no longer listed (trimmed past the retention period, so
// nothing of it is left to read first). finished holds the ids of shards read to their end; a nil map
// means none.
func Ready(shards []Shard, finished map[string]bool) []Shard {
	listed := make(map[string]bool, len(shards))
	for _, s := range shards {
		listed[s.ID] = true
	}
	var out []Shard
	for _, s := range shards {
		if finished[s.ID] {
			continue
		}
		ready := true
		for _, p := range s.Parents() {
			if !finished[p] && listed[p] {
				ready = false
			}
		}
		if ready {
			out = append(out, s)
		}
	}
	return out
}

// LatestStream returns the ARN of the newest stream of table (ListStreams,
// every page; stream labels sort by creation time), or an error saying the
// table has no stream.
func LatestStream(ctx context.Context, api API, table string) (string, error) {
	var arns []struct{ arn, label string }
	var start *string
	for {
		out, err := api.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(table), ExclusiveStartStreamArn: start})
		if err != nil {
			return "", fmt.Errorf("feed: listing the streams of table %s (ListStreams): %w", table, err)
		}
		for _, s := range out.Streams {
			arns = append(arns, struct{ arn, label string }{aws.ToString(s.StreamArn), aws.ToString(s.StreamLabel)})
		}
		if out.LastEvaluatedStreamArn == nil || *out.LastEvaluatedStreamArn == "" {
			break
		}
		start = out.LastEvaluatedStreamArn
	}
	if len(arns) == 0 {
		return "", fmt.Errorf("feed: table %s has no stream: enable one (StreamSpecification StreamEnabled, e.g. NEW_IMAGE) before reading its change feed", table)
	}
	sort.Slice(arns, func(i, j int) bool { return arns[i].label < arns[j].label })
	return arns[len(arns)-1].arn, nil
}

// Error codes the reader treats specially.
const (
	codeExpired    = "ExpiredIteratorException"
	codeTrimmed    = "TrimmedDataAccessException"
	codeNotFound   = "ResourceNotFoundException"
	codeThroughput = "ProvisionedThroughputExceededException"
	codeLimit      = "LimitExceededException"
	codeThrottling = "ThrottlingException"
	codeRequestLim = "RequestLimitExceeded"
)

func errorCode(err error) string { return ErrorCode(err) }

// ErrorCode is the API error code of err (a smithy.APIError's), or "".
func ErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func throttled(err error) bool {
	switch errorCode(err) {
	case codeThroughput, codeLimit, codeThrottling, codeRequestLim:
		return true
	}
	return false
}

// retry runs call, retrying it with a jittered, growing delay while it is
// throttled.
func (r *Reader) retry(ctx context.Context, op string, call func() error) error {
	return Retry(ctx, RetryPolicy{Throttled: throttled, Backoff: r.opts.Backoff, MaxRetries: r.opts.MaxThrottleRetries, OnRetry: r.opts.OnRetry,
		GiveUp: func(attempt int, err error) error { return &ThrottledError{Op: op, Attempts: attempt, Err: err} }}, op, call)
}

// RetryPolicy says which errors Retry retries and how: the change-feed
// readers of DynamoDB Streams (this package) and of Kinesis share it.
type RetryPolicy struct {
	// Throttled reports an error worth retrying.
	Throttled func(error) bool
	// Backoff is the delay before each retry.
	Backoff backoff.Policy
	// MaxRetries bounds the retries; 0 retries until the context ends.
	MaxRetries int
	// OnRetry, when set, is called before each retry.
	OnRetry func(op string, attempt int, err error)
	// GiveUp is the error returned once MaxRetries retries failed.
	GiveUp func(attempt int, err error) error
}

// Retry runs call, retrying it with the policy's jittered, growing delay
// while it fails with an error p.Throttled reports.
func Retry(ctx context.Context, p RetryPolicy, op string, call func() error) error {
	for attempt := 1; ; attempt++ {
		err := call()
		if err == nil || !p.Throttled(err) {
			return err
		}
		if p.MaxRetries > 0 && attempt > p.MaxRetries {
			return p.GiveUp(attempt, err)
		}
		if p.OnRetry != nil {
			p.OnRetry(op, attempt, err)
		}
		if werr := p.Backoff.Wait(ctx, attempt); werr != nil {
			return fmt.Errorf("%w (while retrying a throttled %s: %v)", werr, op, err)
		}
	}
}
