package feed

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/streamsdk"
	"github.com/dynafold/dynafold/internal/backoff"
)

// Position is where a shard's reading continues: just after
// SequenceNumber (AFTER_SEQUENCE_NUMBER), at it when Inclusive
// (AT_SEQUENCE_NUMBER), or at the shard's trim horizon, its oldest record
// still kept, when SequenceNumber is "" (TRIM_HORIZON).
type Position struct {
	SequenceNumber string
	Inclusive      bool
}

// String names the position as GetShardIterator's iterator type and
// sequence number.
func (p Position) String() string {
	switch {
	case p.SequenceNumber == "":
		return "TRIM_HORIZON"
	case p.Inclusive:
		return "AT_SEQUENCE_NUMBER " + p.SequenceNumber
	}
	return "AFTER_SEQUENCE_NUMBER " + p.SequenceNumber
}

// Batch is what one Next returns.
type Batch struct {
	// Shard is the id of the shard read.
	Shard string
	// Records are the shard's next records, in sequence-number order; empty
	// when an open shard has nothing new yet.
	Records []host.Record
	// Finished reports that the shard is closed and these are its last
	// records: once they are processed, the shard is finished and its
	// children may start (see Ready). A Rewind or Seek undoes it.
	Finished bool
	// Behind is how far the batch's last record is behind the shard's
	// newest one, when BehindKnown: Kinesis's MillisBehindLatest, the
	// iterator age. DynamoDB Streams does not tell it (the caller takes
	// the records' creation times instead).
	Behind      time.Duration
	BehindKnown bool
}

// Last is the sequence number of the batch's last record, "" when it has
// none: the checkpoint once the whole batch is processed.
func (b Batch) Last() string {
	if len(b.Records) == 0 {
		return ""
	}
	return b.Records[len(b.Records)-1].DynamoDB.SequenceNumber
}

// ShardIterator reads one shard from a position. It is not safe for
// concurrent use.
type ShardIterator struct {
	r        *Reader
	shard    string
	pos      Position
	iter     *string // the service's iterator at pos; nil: get one first
	finished bool
	idle     bool // the last batch was empty on an open shard: wait before the next call
}

// Iterator returns an iterator over shard shardID that starts just after
// checkpoint, the sequence number of the last record processed
// (AFTER_SEQUENCE_NUMBER), or at the shard's trim horizon when checkpoint is
// "" (TRIM_HORIZON). It calls nothing until the first Next.
func (r *Reader) Iterator(shardID, checkpoint string) *ShardIterator {
	return &ShardIterator{r: r, shard: shardID, pos: Position{SequenceNumber: checkpoint}}
}

// Open is Iterator as a ShardReader, for callers that read a Source.
func (r *Reader) Open(shardID, checkpoint string) ShardReader { return r.Iterator(shardID, checkpoint) }

// Shard is the id of the shard read.
func (it *ShardIterator) Shard() string { return it.shard }

// Position is where the next Next continues: just after the last record
// delivered, or where Rewind or Seek set it.
func (it *ShardIterator) Position() Position { return it.pos }

// Finished reports whether the shard is closed and was read to its end.
func (it *ShardIterator) Finished() bool { return it.finished }

// Rewind makes the shard continue at seq (AT_SEQUENCE_NUMBER), so the
// record with sequence number seq and every record after it are delivered
// again: after a partial batch failure, seq is the lowest failed record
// (the way Lambda resumes a shard from a batch response).
func (it *ShardIterator) Rewind(seq string) {
	it.reset(Position{SequenceNumber: seq, Inclusive: seq != ""})
}

// Seek makes the shard continue just after afterSeq (AFTER_SEQUENCE_NUMBER),
// or at its trim horizon when afterSeq is "" (TRIM_HORIZON): after
// ErrTrimmed, Seek("") skips what was lost and reads what is left.
func (it *ShardIterator) Seek(afterSeq string) {
	it.reset(Position{SequenceNumber: afterSeq})
}

func (it *ShardIterator) reset(p Position) {
	it.pos, it.iter, it.finished, it.idle = p, nil, false, false
}

// Next returns the shard's next batch (GetRecords with Options.BatchSize as
// its Limit) and moves the position just past it. After an empty batch of
// an open shard it first waits Options.PollInterval. Once the shard is
// finished it returns an empty, finished batch without calling anything.
//
// An expired iterator is renewed from the position, so no record is lost or
// repeated; throttled calls are retried (Options.Backoff). A position
// trimmed past the stream's retention period is a *TrimmedError (ErrTrimmed);
// what to do about it is the caller's. On any error the position is kept:
// the next Next starts again from it.
func (it *ShardIterator) Next(ctx context.Context) (Batch, error) {
	b := Batch{Shard: it.shard}
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
		var (
			out   *dynamodbstreams.GetRecordsOutput
			wired []host.Record
			next  *string
		)
		err := it.r.retry(ctx, "GetRecords", func() (err error) {
			if w, ok := it.r.api.(*WireAPI); ok {
				wired, next, err = w.getRecords(ctx, *it.iter, it.r.opts.BatchSize)
				return err
			}
			in := &dynamodbstreams.GetRecordsInput{ShardIterator: it.iter, Limit: aws.Int32(int32(it.r.opts.BatchSize))}
			out, err = it.r.api.GetRecords(ctx, in)
			return err
		})
		if err != nil {
			it.iter = nil // the next attempt gets a fresh iterator at pos
			switch errorCode(err) {
			case codeExpired:
				renewals++
				if renewals > MaxIteratorRenewals {
					return b, fmt.Errorf("feed: shard %s of stream %s: the shard iterator expired %d times in a row, each right after it was renewed at %s; check that this machine's clock and the service agree: %w",
						it.shard, it.r.arn, renewals, it.pos, err)
				}
				if it.r.opts.OnRetry != nil {
					it.r.opts.OnRetry("GetRecords", renewals, err)
				}
				continue
			case codeTrimmed:
				return b, it.trimmed(err, false)
			}
			return b, fmt.Errorf("feed: reading shard %s of stream %s at %s (GetRecords): %w", it.shard, it.r.arn, it.pos, err)
		}
		recs := wired
		if out != nil {
			if recs, err = streamsdk.Records(out.Records); err != nil {
				return b, fmt.Errorf("feed: shard %s of stream %s at %s: converting GetRecords' records: %w", it.shard, it.r.arn, it.pos, err)
			}
			next = out.NextShardIterator
		}
		b.Records = recs
		if last := b.Last(); last != "" {
			it.pos = Position{SequenceNumber: last}
		}
		it.iter = next
		if it.iter == nil {
			it.finished = true
			b.Finished = true
		} else if len(recs) == 0 {
			it.idle = true
		}
		return b, nil
	}
}

// renew gets a shard iterator at the position.
func (it *ShardIterator) renew(ctx context.Context) error {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(it.r.arn), ShardId: aws.String(it.shard)}
	switch {
	case it.pos.SequenceNumber == "":
		in.ShardIteratorType = stypes.ShardIteratorTypeTrimHorizon
	case it.pos.Inclusive:
		in.ShardIteratorType = stypes.ShardIteratorTypeAtSequenceNumber
		in.SequenceNumber = aws.String(it.pos.SequenceNumber)
	default:
		in.ShardIteratorType = stypes.ShardIteratorTypeAfterSequenceNumber
		in.SequenceNumber = aws.String(it.pos.SequenceNumber)
	}
	var out *dynamodbstreams.GetShardIteratorOutput
	err := it.r.retry(ctx, "GetShardIterator", func() (err error) {
		out, err = it.r.api.GetShardIterator(ctx, in)
		return err
	})
	switch errorCode(err) {
	case "":
	case codeTrimmed:
		return it.trimmed(err, false)
	case codeNotFound:
		return it.trimmed(err, true)
	}
	if err != nil {
		return fmt.Errorf("feed: getting an iterator for shard %s of stream %s at %s (GetShardIterator): %w", it.shard, it.r.arn, it.pos, err)
	}
	if out.ShardIterator == nil {
		return fmt.Errorf("feed: GetShardIterator returned no iterator for shard %s of stream %s at %s", it.shard, it.r.arn, it.pos)
	}
	it.iter = out.ShardIterator
	return nil
}

func (it *ShardIterator) trimmed(err error, gone bool) error {
	return &TrimmedError{Stream: it.r.arn, Shard: it.shard, Position: it.pos, Gone: gone, Err: err}
}
