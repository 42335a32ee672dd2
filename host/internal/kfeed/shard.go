package kfeed

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/internal/backoff"
)

// ShardIterator reads one shard of a Kinesis data stream from a position.
// It is not safe for concurrent use.
type ShardIterator struct {
	r        *Reader
	shard    string
	pos      feed.Position
	iter     *string // the service's iterator at pos; nil: get one first
	finished bool
	idle     bool      // the last batch was empty on an open shard: wait before the next call
	last     time.Time // the last GetRecords call, for the pacing
}

// Iterator returns an iterator over shard shardID that starts just after
// checkpoint, a Kinesis sequence number (AFTER_SEQUENCE_NUMBER), or at the
// shard's trim horizon when checkpoint is "" (TRIM_HORIZON). It calls
// nothing until the first Next.
func (r *Reader) Iterator(shardID, checkpoint string) *ShardIterator {
	return &ShardIterator{r: r, shard: shardID, pos: feed.Position{SequenceNumber: checkpoint}}
}

// Open is Iterator as a feed.ShardReader.
func (r *Reader) Open(shardID, checkpoint string) feed.ShardReader {
	return r.Iterator(shardID, checkpoint)
}

var (
	_ feed.Source      = (*Reader)(nil)
	_ feed.ShardReader = (*ShardIterator)(nil)
)

// Shard is the id of the shard read.
func (it *ShardIterator) Shard() string { return it.shard }

// Position is where the next Next continues.
func (it *ShardIterator) Position() feed.Position { return it.pos }

// Finished reports whether the shard is closed and was read to its end.
func (it *ShardIterator) Finished() bool { return it.finished }

// Rewind makes the shard continue at seq (AT_SEQUENCE_NUMBER): the record
// seq and every record after it are delivered again.
func (it *ShardIterator) Rewind(seq string) {
	it.reset(feed.Position{SequenceNumber: seq, Inclusive: seq != ""})
}

// Seek makes the shard continue just after afterSeq, or at its trim
// horizon when afterSeq is "".
func (it *ShardIterator) Seek(afterSeq string) { it.reset(feed.Position{SequenceNumber: afterSeq}) }

func (it *ShardIterator) reset(p feed.Position) {
	it.pos, it.iter, it.finished, it.idle = p, nil, false, false
}

// MaxIteratorRenewals bounds how often one Next renews an iterator that
// keeps coming back expired.
const MaxIteratorRenewals = feed.MaxIteratorRenewals

// Next returns the shard's next batch and moves the position just past
// it; Batch.Behind is GetRecords' MillisBehindLatest. Calls are paced to
// Options.ReadsPerSecond; after an empty batch of an open shard it waits
// Options.PollInterval. Once the shard is finished (GetRecords returned no
// next iterator) it returns an empty, finished batch without calling
// anything, and Children names the shard's children.
//
// An expired iterator is renewed from the position; throttled calls are
// retried. A position whose record was trimmed past the stream's retention
// period, or a shard no longer in the stream, is a *feed.TrimmedError. On
// any error the position is kept.
func (it *ShardIterator) Next(ctx context.Context) (feed.Batch, error) {
	b := feed.Batch{Shard: it.shard}
	if it.finished {
		b.Finished = true
		return b, nil
	}
	if it.idle {
		if err := backoff.Sleep(ctx, it.r.opts.PollInterval); err != nil {
			return b, err
		}
		it.idle = false
	}
	renewals := 0
	for {
		if it.iter == nil {
			if err := it.renew(ctx); err != nil {
				return b, err
			}
		}
		out, err := it.getRecords(ctx, it.iter, int32(it.r.opts.BatchSize))
		if err != nil {
			it.iter = nil
			switch errorCode(err) {
			case codeExpired:
				renewals++
				if renewals > MaxIteratorRenewals {
					return b, fmt.Errorf("kinesis: shard %s of stream %s: the shard iterator expired %d times in a row, each right after it was renewed at %s; check that this machine's clock and the service agree: %w",
						it.shard, it.r.arn, renewals, it.pos, err)
				}
				if it.r.opts.OnRetry != nil {
					it.r.opts.OnRetry("GetRecords", renewals, err)
				}
				continue
			case codeNotFound:
				return b, it.trimmed(err, true)
			}
			return b, fmt.Errorf("kinesis: reading shard %s of stream %s at %s (GetRecords): %w", it.shard, it.r.arn, it.pos, err)
		}
		recs, err := it.records(out.Records)
		if err != nil {
			return b, err
		}
		b.Records = recs
		if ms := out.MillisBehindLatest; ms != nil {
			b.Behind, b.BehindKnown = time.Duration(*ms)*time.Millisecond, true
		}
		if last := b.Last(); last != "" {
			it.pos = feed.Position{SequenceNumber: last}
		}
		it.iter = out.NextShardIterator
		switch {
		case it.iter == nil:
			it.finished, b.Finished = true, true
			if out.ChildShards != nil {
				it.r.noteChildren(it.shard, out.ChildShards)
			}
		case len(recs) == 0:
			it.idle = true
		}
		return b, nil
	}
}

// getRecords calls GetRecords, paced and retried while throttled.
func (it *ShardIterator) getRecords(ctx context.Context, iter *string, limit int32) (*kinesis.GetRecordsOutput, error) {
	var out *kinesis.GetRecordsOutput
	err := it.r.retry(ctx, "GetRecords", func() error {
		if wait := it.r.opts.gap() - time.Since(it.last); wait > 0 {
			if err := backoff.Sleep(ctx, wait); err != nil {
				return err
			}
		}
		it.last = time.Now()
		var err error
		if w, ok := it.r.api.(*WireAPI); ok {
			out, err = w.getRecords(ctx, aws.ToString(iter), limit)
			return err
		}
		out, err = it.r.api.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(limit)})
		return err
	})
	return out, err
}

// records decodes the change records in a batch of Kinesis records.
func (it *ShardIterator) records(in []ktypes.Record) ([]host.Record, error) {
	out := make([]host.Record, 0, len(in))
	for _, kr := range in {
		seq := aws.ToString(kr.SequenceNumber)
		d, err := decode.FromKinesisData(kr.Data, decode.KinesisEnvelope{EventID: it.shard + ":" + seq, EventVersion: "1.0",
			EventSourceARN: it.r.arn, SequenceNumber: seq})
		if err != nil {
			return nil, fmt.Errorf("kinesis: shard %s of stream %s at %s: %w", it.shard, it.r.arn, it.pos, err)
		}
		out = append(out, host.Record{EventID: d.EventID, EventName: d.EventName, EventVersion: d.EventVersion, EventSource: d.EventSource,
			EventSourceARN: d.EventSourceARN, AWSRegion: d.AWSRegion, DynamoDB: host.StreamRecord(d.DynamoDB),
			UserIdentity: (*host.UserIdentity)(d.UserIdentity)})
	}
	return out, nil
}

// renew gets a shard iterator at the position. At a sequence number it
// first checks that the record there is still kept (see checkTrimmed).
func (it *ShardIterator) renew(ctx context.Context) error {
	in := &kinesis.GetShardIteratorInput{StreamName: aws.String(it.r.name), ShardId: aws.String(it.shard)}
	switch {
	case it.pos.SequenceNumber == "":
		in.ShardIteratorType = ktypes.ShardIteratorTypeTrimHorizon
	case it.pos.Inclusive:
		in.ShardIteratorType = ktypes.ShardIteratorTypeAtSequenceNumber
		in.StartingSequenceNumber = aws.String(it.pos.SequenceNumber)
	default:
		in.ShardIteratorType = ktypes.ShardIteratorTypeAfterSequenceNumber
		in.StartingSequenceNumber = aws.String(it.pos.SequenceNumber)
	}
	if in.StartingSequenceNumber != nil {
		if err := it.checkTrimmed(ctx); err != nil {
			return err
		}
	}
	iter, err := it.getIterator(ctx, in)
	if err != nil {
		return err
	}
	it.iter = iter
	return nil
}

func (it *ShardIterator) getIterator(ctx context.Context, in *kinesis.GetShardIteratorInput) (*string, error) {
	var out *kinesis.GetShardIteratorOutput
	err := it.r.retry(ctx, "GetShardIterator", func() (err error) {
		out, err = it.r.api.GetShardIterator(ctx, in)
		return err
	})
	switch {
	case errorCode(err) == codeNotFound:
		return nil, it.trimmed(err, true)
	case err != nil:
		return nil, fmt.Errorf("kinesis: getting an iterator for shard %s of stream %s at %s (GetShardIterator): %w", it.shard, it.r.arn, it.pos, err)
	case out.ShardIterator == nil:
		return nil, fmt.Errorf("kinesis: GetShardIterator returned no iterator for shard %s of stream %s at %s", it.shard, it.r.arn, it.pos)
	}
	return out.ShardIterator, nil
}

// checkTrimmed reports a *feed.TrimmedError when the record at the
// position's sequence number is older than the shard's oldest record kept
// (its trim horizon): records after it may have passed the retention
// period unread. Kinesis itself says nothing (an iterator at a trimmed
// sequence number silently starts at the trim horizon), so the reader
// reads the shard's first record kept and compares, as DynamoDB Streams
// does before it answers TrimmedDataAccessException. It costs one
// GetShardIterator and one GetRecords call per iterator renewed at a
// sequence number (after a lease is taken, a rewind or an expiry).
func (it *ShardIterator) checkTrimmed(ctx context.Context) error {
	iter, err := it.getIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String(it.r.name), ShardId: aws.String(it.shard),
		ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		return err
	}
	out, err := it.getRecords(ctx, iter, 1)
	if err != nil {
		if errorCode(err) == codeNotFound {
			return it.trimmed(err, true)
		}
		return fmt.Errorf("kinesis: reading the oldest record kept of shard %s of stream %s (GetRecords): %w", it.shard, it.r.arn, err)
	}
	if len(out.Records) == 0 {
		return nil
	}
	oldest := aws.ToString(out.Records[0].SequenceNumber)
	if SeqLess(it.pos.SequenceNumber, oldest) {
		return it.trimmed(fmt.Errorf("the shard's oldest record kept is %s, past %s", oldest, it.pos.SequenceNumber), false)
	}
	return nil
}

func (it *ShardIterator) trimmed(err error, gone bool) error {
	return &feed.TrimmedError{Stream: it.r.arn, Shard: it.shard, Position: it.pos, Gone: gone, Err: err}
}

// SeqLess reports whether Kinesis sequence number a comes before b: both
// are decimal numbers of up to 128 digits, compared by value.
func SeqLess(a, b string) bool {
	for len(a) > 1 && a[0] == '0' {
		a = a[1:]
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
