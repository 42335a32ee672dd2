package lambda

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/keys"
)

// maxLogged bounds the failures logged one by one per invocation.
const maxLogged = 20

func invocationLogger(ctx context.Context, l *slog.Logger, source string) *slog.Logger {
	l = l.With("source", source)
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		l = l.With("requestId", lc.AwsRequestID)
	}
	return l
}

// stats sums up one invocation, for the log and the metrics.
type stats struct {
	Records, Events, Ignored, DecodeFailures         int
	PassedOver                                       int // records whose item was removed or corrected since (host.Result.Obsolete)
	Corrected                                        int // records whose item was corrected since into an event, folded as it is now (host.Result.Corrected)
	Applied, AlreadyApplied, RowsWritten, RowsFailed int
	Conflicts, BatchItemFailures                     int   // Conflicts: rows failed on a lost race or a checkpoint conflict (host.Counts)
	Retries                                          int   // row write attempts beyond the first: lost conditional-write races (host.Counts)
	Throttled                                        int64 // DynamoDB request attempts refused for their rate and retried by the client (host.ThrottledRequests)
	DurationMs                                       float64
	OldestRecordAgeMs                                int64 // -1: no record carries a creation time
	// The check of the hot-swapped plugins' sources before the batch;
	// HotSwap is false when none was checked.
	HotSwap                         bool
	PluginSwaps, PluginSwapFailures int

	Enqueued, Delivered, Undelivered int // outbox effects committed, delivered, not delivered
}

func summarize(res *host.Result, bad []badRecord, resp events.DynamoDBEventResponse, took time.Duration, oldest time.Time) stats {
	s := stats{Records: res.Records, Events: len(res.Events), Ignored: len(res.Ignored) - countReported(bad), PassedOver: len(res.Obsolete), Corrected: len(res.Corrected),
		DecodeFailures: len(res.DecodeFailures) + countReported(bad), BatchItemFailures: len(resp.BatchItemFailures),
		DurationMs: float64(took.Microseconds()) / 1000, OldestRecordAgeMs: -1}
	if !oldest.IsZero() {
		s.OldestRecordAgeMs = time.Since(oldest).Milliseconds()
	}
	// The row counts are host.Result.Counts', as host run's Prometheus
	// counters are: a conflict is a row that failed on a lost race or a
	// checkpoint conflict, a retry a lost race (a new row's write that found
	// the row there is neither).
	for name, pr := range res.Projections {
		c := res.Counts(name)
		s.Applied, s.AlreadyApplied = s.Applied+c.Applied, s.AlreadyApplied+c.AlreadyApplied
		s.RowsWritten, s.RowsFailed = s.RowsWritten+c.RowsWritten, s.RowsFailed+c.RowsFailed
		s.Conflicts, s.Retries = s.Conflicts+c.Conflicts, s.Retries+c.Retries
		for i := range pr.Rows {
			if row := &pr.Rows[i]; !row.Failed() {
				s.Enqueued, s.Delivered, s.Undelivered = s.Enqueued+row.Enqueued, s.Delivered+row.Delivered, s.Undelivered+row.Undelivered
			}
		}
	}
	return s
}

// logBatch writes each failure (up to maxLogged of them) with the error
// that caused it, then one summary line.
func logBatch(log *slog.Logger, res *host.Result, bad []badRecord, skipBad bool, s stats) {
	logged := 0
	warn := func(msg string, args ...any) {
		if logged < maxLogged {
			log.Warn(msg, args...)
		}
		logged++
	}
	for _, b := range bad {
		if b.report {
			warn("unreadable record", "position", b.pos, "eventID", b.eventID, "sequenceNumber", b.seq, "skipped", skipBad, "err", b.err.Error())
		}
	}
	for _, f := range res.DecodeFailures {
		warn("record failed to decode", "position", f.Position, "identifier", f.Identifier, "skipped", f.Skipped, "err", f.Err.Error())
	}
	for name, pr := range res.Projections {
		for i := range pr.Rows {
			if row := &pr.Rows[i]; row.Failed() {
				warn("row failed", "projection", name, "key", keyString(row.Key), "positions", row.Positions, "err", row.Err.Error())
			}
		}
		for _, kf := range pr.KeyFailures {
			warn("key failed", "projection", name, "position", kf.Position, "err", kf.Err.Error())
		}
	}
	args := []any{"records", s.Records, "events", s.Events, "ignored", s.Ignored, "decodeFailures", s.DecodeFailures,
		"applied", s.Applied, "alreadyApplied", s.AlreadyApplied, "rowsWritten", s.RowsWritten, "rowsFailed", s.RowsFailed,
		"conflicts", s.Conflicts, "batchItemFailures", s.BatchItemFailures, "durationMs", s.DurationMs}
	if s.OldestRecordAgeMs >= 0 {
		// The change feed's lag: how long the oldest record waited.
		args = append(args, "oldestRecordAgeMs", s.OldestRecordAgeMs)
	}
	if s.Throttled > 0 {
		args = append(args, "throttledRequests", s.Throttled)
	}
	if s.Retries > 0 {
		args = append(args, "retries", s.Retries)
	}
	if s.PassedOver > 0 {
		args = append(args, "passedOver", s.PassedOver)
	}
	if s.Corrected > 0 {
		args = append(args, "correctedSince", s.Corrected)
	}
	if s.Enqueued+s.Delivered+s.Undelivered > 0 {
		args = append(args, "effectsEnqueued", s.Enqueued, "effectsDelivered", s.Delivered, "effectsUndelivered", s.Undelivered)
	}
	if s.HotSwap {
		args = append(args, "pluginSwaps", s.PluginSwaps, "pluginSwapFailures", s.PluginSwapFailures)
	}
	if logged > maxLogged {
		args = append(args, "failuresNotLogged", logged-maxLogged)
	}
	log.Info("batch", args...)
}

func countReported(bad []badRecord) int {
	n := 0
	for _, b := range bad {
		if b.report {
			n++
		}
	}
	return n
}

func keyString(k abi.Item) string { return keys.String(k) }

// oldest returns the earliest ApproximateCreationDateTime of the records
// (zero when none carries one).
func oldest(recs []host.Record) time.Time {
	var t time.Time
	for i := range recs {
		c := recs[i].DynamoDB.ApproximateCreationDateTime
		if !c.IsZero() && (t.IsZero() || c.Before(t)) {
			t = c
		}
	}
	return t
}
