package sidecar

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/lease"
)

// ErrSharedLeaseTable is matched by the error that stops a reader whose
// stream lists a shard whose lease, under the same shard id, belongs to
// another stream in the lease table (Kinesis streams number their shards
// alike): two fleets share one lease table.
var ErrSharedLeaseTable = fmt.Errorf("sidecar: the lease table is shared with another stream")

// streamArn is the stream read ("" before Run opened it).
func (r *Reader) streamArn() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.arn
}

// own returns the leases of the stream read (lease.OfStream), leaving out
// those of other streams in the same table, and logs once per other
// stream that the table holds its leases.
func (r *Reader) own(all []lease.Lease, arn string) []lease.Lease {
	own, foreign := lease.Split(all, arn)
	if len(foreign) == 0 {
		return own
	}
	r.mu.Lock()
	var fresh []string
	for s := range foreign {
		if !r.foreign[s] {
			r.foreign[s] = true
			fresh = append(fresh, s)
		}
	}
	r.mu.Unlock()
	slices.Sort(fresh)
	for _, s := range fresh {
		r.log.Warn("the lease table holds leases of another stream: two fleets share one lease table; give each its own sidecar.leaseTable. This worker leaves those leases alone",
			"leaseTable", r.sc.LeaseTable, "otherStream", s, "leases", foreign[s], "stream", arn)
	}
	return own
}

// sharedShards returns the error of listed shards whose lease key the
// table holds for another stream: this stream's leases of them cannot be
// created.
func (r *Reader) sharedShards(all []lease.Lease, shards []feed.Shard, arn string) error {
	listed := make(map[string]bool, len(shards))
	for _, s := range shards {
		listed[s.ID] = true
	}
	var ids, others []string
	for _, l := range all {
		if listed[l.Key] && !lease.OfStream(arn, l.Stream) {
			ids = append(ids, l.Key)
			if !slices.Contains(others, l.Stream) {
				others = append(others, l.Stream)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	return fmt.Errorf("%w: lease table %s holds the leases of shards %s for stream %s, not for stream %s read here: give each fleet its own sidecar.leaseTable (or delete those leases if that stream is gone)",
		ErrSharedLeaseTable, r.sc.LeaseTable, strings.Join(ids, ","), strings.Join(others, ","), arn)
}
