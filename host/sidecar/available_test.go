package sidecar

import (
	"testing"

	"github.com/dynafold/dynafold/host/internal/lease"
)

// A lease round lists the leases, then forgets the shard readers that
// ended since; a shard that finished in between still shows this worker
// as its owner, without its end checkpoint, in that listing.
func TestC3_AShardFinishedSinceTheListingIsNotTakenForAnotherWorkers(t *testing.T) {
	const worker, instance = "w1", "i-1"
	all := []lease.Lease{
		{Key: "s-finished", Owner: worker, Instance: instance, Checkpoint: "100"},
		{Key: "s-held", Owner: worker, Instance: instance, Checkpoint: "200"},
		{Key: "s-crashed-run", Owner: worker, Instance: "i-0", Checkpoint: "300"},
		{Key: "s-other", Owner: "w2", Instance: "j-1", Checkpoint: "400"},
	}
	listed := map[string]bool{"s-finished": true, "s-held": true, "s-crashed-run": true, "s-other": true}
	mine := map[string]bool{"s-held": true}
	ended := map[string]bool{"s-finished": true}
	got := map[string]string{}
	for _, l := range available(all, listed, mine, ended, worker, instance) {
		got[l.Key] = l.Owner
	}
	want := map[string]string{
		"s-held":        worker,
		"s-crashed-run": otherInstance(worker, "i-0"),
		"s-other":       "w2",
	}
	if len(got) != len(want) {
		t.Fatalf("available: %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: owner %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
}
