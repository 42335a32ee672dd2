package feed

import (
	"errors"
	"fmt"
)

// ErrTrimmed is what a *TrimmedError matches with errors.Is: records the
// reader was to read next were removed from the stream (older than its
// retention period, 24 hours on DynamoDB) before they were read.
var ErrTrimmed = errors.New("feed: stream records trimmed before they were read")

// TrimmedError reports that a shard's records at Position were trimmed, or
// that the shard itself is gone (Gone), before they were read: those
// changes are lost to this reader. The reader never skips them by itself;
// the caller chooses: stop and alert, or rebuild the read models from the
// event store and continue with Seek("") (the shard's oldest record still
// kept) or, when Gone, by treating the shard as finished.
type TrimmedError struct {
	// Stream is the stream's ARN, Shard the shard's id.
	Stream, Shard string
	// Position is where reading was to continue.
	Position Position
	// Gone reports that the shard is no longer in the stream at all (its
	// records all passed the retention period, or the stream was deleted).
	Gone bool
	// Err is the service's error (TrimmedDataAccessException or
	// ResourceNotFoundException).
	Err error
}

// Error says which shard and position, what was lost and what to do.
func (e *TrimmedError) Error() string {
	if e.Gone {
		return fmt.Sprintf("feed: stream %s: shard %s no longer exists, so its records after %s, if it had any, were lost to this reader: "+
			"they passed the stream's retention period (24 h on DynamoDB), or the stream was deleted; "+
			"rebuild the affected read models from the event store if records were lost, and treat the shard as finished so its children start: %v",
			e.Stream, e.Shard, e.Position, e.Err)
	}
	return fmt.Sprintf("feed: stream %s: the records of shard %s at %s were trimmed before they were read: they passed the stream's retention period (24 h on DynamoDB), so changes are lost to this reader; "+
		"rebuild the affected read models from the event store, then continue at the shard's oldest record still kept (Seek(\"\")): %v",
		e.Stream, e.Shard, e.Position, e.Err)
}

// Is makes errors.Is(err, ErrTrimmed) true.
func (e *TrimmedError) Is(target error) bool { return target == ErrTrimmed }

// Unwrap returns the service's error.
func (e *TrimmedError) Unwrap() error { return e.Err }

// ThrottledError reports a call still throttled after
// Options.MaxThrottleRetries retries.
type ThrottledError struct {
	// Op is the API call ("GetRecords", "GetShardIterator", "DescribeStream").
	Op string
	// Attempts is how many times it was tried.
	Attempts int
	// Err is the last throttling error.
	Err error
}

// Error names the call and says what to change.
func (e *ThrottledError) Error() string {
	return fmt.Sprintf("feed: %s still throttled after %d attempts: DynamoDB Streams allows about 2 readers and 5 GetRecords calls per second per shard, and 10 DescribeStream calls per second; "+
		"run fewer readers of the stream, raise the poll interval, or allow more retries: %v", e.Op, e.Attempts, e.Err)
}

// Unwrap returns the last throttling error.
func (e *ThrottledError) Unwrap() error { return e.Err }
