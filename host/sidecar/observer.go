// Package sidecar is the host's own DynamoDB Streams reader: it reads every
// projection's event-table stream, shares the shards among processes with
// leases kept in a DynamoDB table, hands each batch to Host.ProcessBatch and
// checkpoints per shard.
package sidecar

import (
	"time"

	"github.com/dynafold/dynafold/host"
)

// Observer is told what the reader does, for metrics and status pages. Its
// methods are called from the reader's goroutines, concurrently; they must
// not block.
type Observer interface {
	// ShardRead is called after every GetRecords call on a shard: the
	// number of records returned and how far behind the newest one the
	// shard's reader is (MillisBehindLatest, or the age of the last
	// record; 0 when caught up).
	ShardRead(stream, shard string, records int, behind time.Duration)
	// BatchProcessed is called after every batch handed to ProcessBatch,
	// with its result (nil when err is set) and how long it took.
	BatchProcessed(stream, shard string, res *host.Result, took time.Duration, err error)
	// LeasesHeld is called after every lease round: the shards this worker
	// holds (by shard id) out of the total known for the stream.
	LeasesHeld(worker, stream string, held []string, total int)
	// RecordGivenUp is called when the failure policy gives up a record
	// and sends it to the on-failure destination.
	RecordGivenUp(projection, stream, shard string, rec host.Record, reason string)
}

// NopObserver observes nothing.
type NopObserver struct{}

// ShardRead implements Observer.
func (NopObserver) ShardRead(string, string, int, time.Duration) {}

// BatchProcessed implements Observer.
func (NopObserver) BatchProcessed(string, string, *host.Result, time.Duration, error) {}

// LeasesHeld implements Observer.
func (NopObserver) LeasesHeld(string, string, []string, int) {}

// RecordGivenUp implements Observer.
func (NopObserver) RecordGivenUp(string, string, string, host.Record, string) {}
