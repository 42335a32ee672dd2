package sidecar

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/internal/backoff"
)

// ErrDuplicateWorker is matched (errors.Is) by the error of Run when
// another running process uses the same worker id: give each process its
// own (sidecar.workerId, `host run --worker-id`).
var ErrDuplicateWorker = errors.New("sidecar: another running process has the same worker id")

// DuplicateWorkerError names the other process holding leases under this
// worker id.
type DuplicateWorkerError struct {
	WorkerID string
	// Instance is the other process's instance token: its start time,
	// host name and process id, as it wrote them into its leases ("" for
	// a version that wrote none).
	Instance string
	Shards   []string // the shards it holds
	// Running reports that both processes were running (they started at
	// the same moment, both before either held a lease): this one gives
	// way, being the later started by the instance tokens, or holding no
	// lease.
	Running bool
}

// Error says who holds what and what to do.
func (e *DuplicateWorkerError) Error() string {
	when := "renewed them while this one watched at start, so it is running"
	if e.Running {
		when = "renews them while this one runs; this one stops and leaves the stream to it"
	}
	return fmt.Sprintf("worker id %q is already used by another process (%s), which holds shard %s and %s: give each process its own worker id (`host run --worker-id`, or sidecar.workerId in the configuration); the default, the host name and process id, is unique",
		e.WorkerID, describeInstance(e.Instance), strings.Join(e.Shards, ", "), when)
}

// Is makes errors.Is(err, ErrDuplicateWorker) true.
func (e *DuplicateWorkerError) Is(target error) bool { return target == ErrDuplicateWorker }

// newInstance draws this process's instance token: the start time (fixed
// width, so tokens sort by it), the host name, the process id and random
// bits.
func newInstance(now time.Time) string {
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, "/", "-")
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405.000000000Z") + "/" + host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// describeInstance says which process an instance token names.
func describeInstance(inst string) string {
	parts := strings.Split(inst, "/")
	if len(parts) != 4 {
		if inst == "" {
			return "one of a version that records no instance"
		}
		return "instance " + inst
	}
	started := parts[0]
	if t, err := time.Parse("20060102T150405.000000000Z", parts[0]); err == nil {
		started = t.Format(time.RFC3339)
	}
	return fmt.Sprintf("host %s, process %s, started %s; instance %s", parts[1], parts[2], started, inst)
}

// otherInstance is how the leases of another process under this worker id
// count in the balance: as a worker of their own.
func otherInstance(worker, instance string) string {
	return worker + " (instance " + instance + ")"
}

// watchOwnID runs before the first lease round: when the lease table has
// leases under this worker id written by another process instance (a
// process running with the same id, or an earlier run of this one that
// crashed), it watches them for one lease duration. A lease whose counter
// moves while still that instance's means another process runs with this
// id: the start is refused, naming it. Leases that stay still are an
// earlier run's and expire: tr then knows them as expired, and the first
// round takes them.
func (r *Reader) watchOwnID(ctx context.Context, tr *lease.Tracker) error {
	all, err := r.listRetrying(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	tr.Observe(all, start)
	suspects := map[string]lease.Lease{}
	for _, l := range all {
		if l.Owner == r.sc.WorkerID && l.Instance != r.instance {
			suspects[l.Key] = l
		}
	}
	if len(suspects) == 0 {
		return nil
	}
	keys := make([]string, 0, len(suspects))
	for k := range suspects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	r.log.Info("leases held under this worker id by another process or an earlier run; watching them for a lease duration before reading",
		"worker", r.sc.WorkerID, "shards", keys, "leaseDuration", tr.Duration.String())
	every := max(min(time.Duration(r.sc.PollInterval), r.renewEvery()/2), 10*time.Millisecond)
	for time.Since(start) < tr.Duration {
		if err := backoff.Sleep(ctx, min(every, tr.Duration-time.Since(start))); err != nil {
			return err
		}
		all, err := r.listRetrying(ctx)
		if err != nil {
			return err
		}
		now := time.Now()
		tr.Observe(all, now)
		var moved []lease.Lease
		for _, l := range all {
			s, ok := suspects[l.Key]
			switch {
			case !ok:
			case l.Owner != s.Owner || l.Instance != s.Instance:
				delete(suspects, l.Key) // released or taken by another worker meanwhile
			case l.Counter != s.Counter:
				moved = append(moved, l)
			}
		}
		if len(moved) > 0 {
			return r.duplicate(moved[0].Instance, all, false)
		}
		if len(suspects) == 0 {
			return nil
		}
	}
	r.log.Info("leases of an earlier run under this worker id expired; taking them over", "worker", r.sc.WorkerID, "shards", keys)
	return nil
}

// listRetrying reads the leases of the stream read, retrying a failed read with a growing
// delay as a lease round would; a lease table that does not exist, or the
// end of ctx, ends it.
func (r *Reader) listRetrying(ctx context.Context) ([]lease.Lease, error) {
	for attempt := 1; ; attempt++ {
		all, err := r.leases.List(ctx)
		if err == nil {
			return r.own(all, r.streamArn()), nil
		}
		if errors.Is(err, lease.ErrNoTable) || ctx.Err() != nil {
			return all, err
		}
		r.log.Warn("reading the lease table failed; retrying", "err", why(err), "attempt", attempt)
		if werr := startRetry.Wait(ctx, attempt); werr != nil {
			return nil, werr
		}
	}
}

// startRetry is the delay between reads of the lease table at start.
var startRetry = backoff.Policy{Base: 100 * time.Millisecond, Max: 5 * time.Second}

// duplicate is the error naming the process of instance inst.
func (r *Reader) duplicate(inst string, all []lease.Lease, running bool) error {
	e := &DuplicateWorkerError{WorkerID: r.sc.WorkerID, Instance: inst, Running: running}
	for _, l := range all {
		if l.Owner == r.sc.WorkerID && l.Instance == inst {
			e.Shards = append(e.Shards, l.Key)
		}
	}
	slices.Sort(e.Shards)
	return e
}

// dupes watches, lease round after lease round, for leases under this
// worker id that another instance holds and renews: two processes started
// together with one id both pass the check at start. A process that sees
// the other's leases renewed stops when it is the later started (by the
// instance tokens) or holds no lease: the other one cannot see it then.
// Otherwise it logs it once and reads on: the other stops.
type dupes struct {
	r       *Reader
	mu      sync.Mutex
	seen    map[string]lease.Lease // by shard: the lease as last seen under another instance
	warned  map[string]bool        // instances logged
	stopped bool
}

// observe looks at the leases of a round; it returns the error that stops
// this reader when it is the later of two processes with one id.
func (d *dupes) observe(all []lease.Lease, mine map[string]bool, now time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen, d.warned = map[string]lease.Lease{}, map[string]bool{}
	}
	r := d.r
	for _, l := range all {
		if l.Owner != r.sc.WorkerID || l.Instance == r.instance || mine[l.Key] {
			delete(d.seen, l.Key)
			continue
		}
		prev, ok := d.seen[l.Key]
		d.seen[l.Key] = l
		if !ok || prev.Instance != l.Instance || prev.Counter == l.Counter {
			continue
		}
		// renewed by another live process under this id
		// "" (a version without instances) cannot see this one: this one
		// gives way
		if l.Instance > r.instance && len(mine) > 0 {
			if !d.warned[l.Instance] {
				d.warned[l.Instance] = true
				r.log.Error("another process runs with this worker id; it stops, being the later started: give each process its own worker id",
					"worker", r.sc.WorkerID, "other", describeInstance(l.Instance), "shard", l.Key)
			}
			continue
		}
		if !d.stopped {
			d.stopped = true
			err := r.duplicate(l.Instance, all, true)
			r.log.Error("another process runs with this worker id; stopping this one", "worker", r.sc.WorkerID, "err", why(err))
			return err
		}
	}
	return nil
}
