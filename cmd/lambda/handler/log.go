package handler

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/batch"
	"github.com/dynafold/dynafold/host/decode"
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

// logBatch writes one summary line per invocation, then each failure (up
// to maxLogged of them) with the error that caused it.
func logBatch(log *slog.Logger, res *batch.Result, bad []badRecord, skipBad bool, resp events.DynamoDBEventResponse, took time.Duration, oldest time.Time) {
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
	for _, f := range res.Decoded.Failures {
		warn("record failed to decode", "position", f.Position, "identifier", f.Identifier, "skipped", f.Skipped, "err", f.Err.Error())
	}
	applied, failedRows, written := 0, 0, 0
	for name, pr := range res.Projections {
		for i := range pr.Rows {
			row := &pr.Rows[i]
			if row.Failed() {
				failedRows++
				warn("row failed", "projection", name, "key", keyString(row.Key), "positions", row.Positions, "err", row.Err.Error())
				continue
			}
			applied += len(row.Applied())
			if row.Written {
				written++
			}
		}
		for _, kf := range pr.KeyFailures {
			warn("key failed", "projection", name, "position", kf.Pos, "err", kf.Err.Error())
		}
	}
	var age []any
	if !oldest.IsZero() {
		// The change feed's lag: how long the oldest record waited (reference 003).
		age = []any{"oldestRecordAgeMs", time.Since(oldest).Milliseconds()}
	}
	log.Info("batch", append([]any{
		"records", res.Records, "events", len(res.Decoded.Events), "ignored", len(res.Decoded.Ignored) - len(bad),
		"decodeFailures", len(res.Decoded.Failures) + countReported(bad),
		"applied", applied, "rowsWritten", written, "rowsFailed", failedRows,
		"batchItemFailures", len(resp.BatchItemFailures), "durationMs", float64(took.Microseconds()) / 1000}, age...)...)
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

func keyString(k abi.Item) string {
	b, err := decode.ItemToJSON(k)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// oldest returns the earliest ApproximateCreationDateTime of the records
// (zero when none carries one).
func oldest(recs []decode.Record) time.Time {
	var t time.Time
	for i := range recs {
		c := recs[i].DynamoDB.ApproximateCreationDateTime
		if !c.IsZero() && (t.IsZero() || c.Before(t)) {
			t = c
		}
	}
	return t
}
