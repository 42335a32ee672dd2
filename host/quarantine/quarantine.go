// Package quarantine keeps the stream records a reader gave up on: the
// record, why, and when it was first seen, so an operator can list them
// and replay them once the cause is fixed.
package quarantine

import (
	"context"
	"time"

	"github.com/dynafold/dynafold/host"
)

// Entry is one record given up: the stream record as it arrived, the
// projection and shard it came through, why it was given up, when it was
// first seen failing and how many times it was tried.
type Entry struct {
	ID         string      // unique per entry; set by the destination when empty
	Projection string      // the projection whose rows failed ("" for a decode failure)
	Stream     string      // the stream's ARN or name
	Shard      string      // the shard id
	Record     host.Record // the record, images included
	Reason     string      // the error, as text
	FirstSeen  time.Time   // the first failure of this record
	Attempts   int         // deliveries tried before giving up
}

// Destination receives the records a reader gives up on. Send must be
// durable when it returns nil: the reader then moves past the record.
type Destination interface {
	Send(ctx context.Context, e Entry) error
}
