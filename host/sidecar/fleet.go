package sidecar

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/lease"
)

// States of a shard in the fleet view (FleetShard.State).
const (
	ShardOpen     = "open"     // readable, held by a live worker, still taking records
	ShardClosed   = "closed"   // readable, held by a live worker, taking no more records
	ShardFinished = "finished" // read to its end (checkpoint SHARD_END)
	ShardUnowned  = "unowned"  // readable, and no live worker holds it
	ShardWaiting  = "waiting"  // a child whose parents are not finished yet
)

// Fleet is the fleet view: every shard of the stream with its lease, and
// every worker the lease table names, as read at one moment. Times of the
// lease table (heartbeats) are by the clocks of the workers that wrote
// them.
type Fleet struct {
	Stream        string        // the stream's ARN ("" when the table has none)
	LeaseTable    string        // the lease table read
	LeaseDuration time.Duration // the configuration's sidecar.leaseDuration
	At            time.Time     // when it was read
	Shards        []FleetShard  // parents before their children, then by id
	Workers       []FleetWorker // by id
	// StreamErr is why the stream's shards could not be listed (the view
	// then shows the leases alone).
	StreamErr error
	// Projections are the configuration's projections (and any other the
	// lease table names): paused or not, what waits to be caught up, and
	// the freshness the workers published (pause.go).
	Projections []FleetProjection
	// Verify is the last continuous verification pass of each projection
	// (none without the sidecar section's "verify"), by projection.
	Verify []FleetVerify
	// OtherStreams counts, by stream ARN, the leases the lease table
	// holds for other streams than Stream: another fleet shares the
	// table. They are left out of Shards and Workers.
	OtherStreams map[string]int
}

// FleetShard is one shard of the fleet view.
type FleetShard struct {
	ID         string
	Parents    []string
	State      string    // ShardOpen, ShardClosed, ShardFinished, ShardUnowned or ShardWaiting
	Closed     bool      // the shard takes no more records (it has an ending sequence number)
	Listed     bool      // the stream lists it (false: trimmed away, or the stream unreadable)
	HasLease   bool      // the lease table has its lease (false: no worker has listed it yet)
	Owner      string    // the worker holding its lease; "" when none
	Expired    bool      // Owner has not renewed the lease for a lease duration
	StealBy    string    // a worker that asked for it, for balance
	Checkpoint string    // the lease's checkpoint: a sequence number, TRIM_HORIZON or SHARD_END
	Heartbeat  time.Time // the lease's last write; zero when unknown
	// Lag is the age of the oldest record after the checkpoint (0: none
	// waiting), when LagKnown.
	Lag      time.Duration
	LagKnown bool
	// UnownedFor is how long the shard has been readable with no live
	// owner, when UnownedKnown (see Fleet.Problems).
	UnownedFor   time.Duration
	UnownedKnown bool
}

// FleetWorker is one worker the lease table names: an owner of a lease or
// a worker that asked for one. A worker that holds no lease and asked for
// none is not in the lease table.
type FleetWorker struct {
	ID          string
	Shards      []string  // the shards it holds
	Asking      []string  // the shards it asked for
	LastRenewal time.Time // the newest heartbeat of its leases; zero when it holds none
	Alive       bool      // it renewed a lease within the lease duration
	// Plugins are the plugin versions it last published ("name@version"
	// by projection; nil when it published none): a fleet in a rolling
	// deploy shows which worker runs which.
	Plugins map[string]string
}

// FleetProblem is a readable shard that has had no live owner for longer
// than the lease duration: no worker is reading it.
type FleetProblem struct {
	Shard string
	For   time.Duration // 0 when unknown (no worker alive to take it at all)
	Owner string        // the worker whose lease expired, "" when none
}

// Error says what is wrong and what to do.
func (p FleetProblem) Error() string {
	switch {
	case p.Owner != "":
		return fmt.Sprintf("shard %s has had no live owner for %s: %s stopped renewing its lease and no worker took it over; start a worker (`host run`) or check why the others do not take it", p.Shard, p.For.Round(time.Second), p.Owner)
	case p.For > 0:
		return fmt.Sprintf("shard %s has had no owner for %s: no worker reads it; start a worker (`host run`)", p.Shard, p.For.Round(time.Second))
	}
	return fmt.Sprintf("shard %s has no owner and no worker is alive to take it: start a worker (`host run`)", p.Shard)
}

// Problems returns the readable shards that have had no live owner for
// longer than the lease duration (a released lease is taken within a third
// of it, an expired one within about one more), and those without a lease
// while no worker is alive at all.
func (f Fleet) Problems() []FleetProblem {
	alive := slices.ContainsFunc(f.Workers, func(w FleetWorker) bool { return w.Alive })
	var out []FleetProblem
	for _, s := range f.Shards {
		if s.State != ShardUnowned {
			continue
		}
		owner := ""
		if s.Expired {
			owner = s.Owner
		}
		switch {
		case s.UnownedKnown && s.UnownedFor > f.LeaseDuration:
			out = append(out, FleetProblem{Shard: s.ID, For: s.UnownedFor, Owner: owner})
		case !s.UnownedKnown && !alive:
			out = append(out, FleetProblem{Shard: s.ID, Owner: owner})
		}
	}
	return out
}

// Shard returns the shard id of the view.
func (f Fleet) Shard(id string) (FleetShard, bool) {
	i := slices.IndexFunc(f.Shards, func(s FleetShard) bool { return s.ID == id })
	if i < 0 {
		return FleetShard{}, false
	}
	return f.Shards[i], true
}

// FleetOptions tunes ReadFleet.
type FleetOptions struct {
	// Lag reads, for each shard not finished, the first record after its
	// checkpoint (one GetRecords call per shard) to tell its lag.
	Lag bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// ReadFleet reads the fleet view of cfg's sidecar: the lease table and the
// stream's shards. client and streams may be nil: they are then built from
// the configuration's endpoint and region. A lease table that does not
// exist is an error matching lease.ErrNoTable's text (`host tables
// create`); a stream that cannot be listed is kept in Fleet.StreamErr, a
// *host.TablesError when the event table does not exist.
func ReadFleet(ctx context.Context, cfg *host.Config, client *dynamodb.Client, streams StreamsAPI, o FleetOptions) (Fleet, error) {
	if cfg.Sidecar == nil {
		return Fleet{}, errors.New(`configuration: no "sidecar" section: add one with at least "leaseTable", the DynamoDB table for the reader's leases`)
	}
	client, api, err := clients(ctx, cfg, client, streams)
	if err != nil {
		return Fleet{}, err
	}
	kin, err := kinesisClient(ctx, cfg, nil)
	if err != nil {
		return Fleet{}, err
	}
	sc := cfg.EffectiveSidecar()
	src, srcErr := openSource(ctx, cfg, api, kin, feed.Options{BatchSize: 1})
	f, err := readFleet(ctx, cfg, lease.NewTable(client, sc.LeaseTable), src, srcErr, time.Duration(sc.LeaseDuration), o)
	if f.StreamErr != nil && sc.Kinesis == nil {
		f.StreamErr = eventTableMissing(ctx, client, cfg.EventStore.Table, f.StreamErr)
	}
	return f, err
}

// eventTableMissing returns the error of an event table whose stream could
// not be listed: a table that does not exist has no stream either, and
// saying so would send the operator to the wrong fix. Any other case keeps
// streamErr.
func eventTableMissing(ctx context.Context, client *dynamodb.Client, table string, streamErr error) error {
	_, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var rnf *types.ResourceNotFoundException
	if errors.As(err, &rnf) {
		return &host.TablesError{Problems: []host.TableProblem{{Table: table, Role: "event store", Problem: "does not exist"}}}
	}
	return streamErr
}

// Fleet reads the fleet view through the reader's own clients.
func (r *Reader) Fleet(ctx context.Context, o FleetOptions) (Fleet, error) {
	r.mu.Lock()
	arn := r.arn
	r.mu.Unlock()
	var src feed.Source
	var err error
	if arn != "" && r.kin == nil { // the stream being read, not a newer one
		src = feed.NewReader(r.api, arn, feed.Options{BatchSize: 1})
	} else {
		src, err = openSource(ctx, r.cfg, r.api, r.kin, feed.Options{BatchSize: 1})
	}
	return readFleet(ctx, r.cfg, r.leases, src, err, time.Duration(r.sc.LeaseDuration), o)
}

// logLost logs a lease found lost to another worker (by a renewal or a
// checkpoint), with the lease's owner now.
func (r *Reader) logLost(ctx context.Context, shard string) {
	r.log.Warn("lease lost to another worker; stopping the shard's reading", "shard", shard, "newOwner", r.ownerNow(ctx, shard))
}

// ownerNow is the owner of a shard's lease as the table holds it now, for
// the log of a lease lost ("" when free, "unknown" when it cannot be read).
func (r *Reader) ownerNow(ctx context.Context, shard string) string {
	l, ok, err := r.leases.Get(ctx, shard)
	switch {
	case err != nil:
		return "unknown"
	case !ok:
		return ""
	}
	return l.Owner
}

func readFleet(ctx context.Context, cfg *host.Config, lt *lease.Table, rd feed.Source, srcErr error, dur time.Duration, o FleetOptions) (Fleet, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	f := Fleet{LeaseTable: lt.Name(), LeaseDuration: dur}
	all, ctl, err := lt.ListAll(ctx)
	if err != nil {
		return f, err
	}
	var shards []feed.Shard
	arn := ""
	f.StreamErr = srcErr
	if f.StreamErr == nil {
		arn = rd.StreamArn()
		shards, f.StreamErr = rd.Shards(ctx)
	}
	if f.Verify, err = fleetVerify(ctx, lt); err != nil {
		return f, err
	}
	f.Stream = arn
	f.At = now()
	if arn != "" {
		all, f.OtherStreams = lease.Split(all, arn)
	}
	f.Shards, f.Workers = fleetOf(all, shards, f.StreamErr == nil, dur, f.At)
	pluginsOf(f.Workers, ctl.Workers)
	f.Projections = projectionsOf(cfg, ctl, f.At)
	if o.Lag && srcErr == nil {
		for i := range f.Shards {
			s := &f.Shards[i]
			if s.State == ShardFinished || s.State == ShardWaiting || !s.Listed {
				continue
			}
			s.Lag, s.LagKnown = shardLag(ctx, rd, s.ID, s.Checkpoint, f.At)
		}
	}
	return f, nil
}

// shardLag is the age of the first record after the checkpoint, 0 when
// there is none.
func shardLag(ctx context.Context, rd feed.Source, shard, ckpt string, now time.Time) (time.Duration, bool) {
	if ckpt == lease.TrimHorizon {
		ckpt = ""
	}
	b, err := rd.Open(shard, ckpt).Next(ctx)
	if err != nil {
		return 0, false
	}
	if len(b.Records) == 0 {
		return 0, true
	}
	t := b.Records[0].DynamoDB.ApproximateCreationDateTime
	if t.IsZero() {
		return 0, false
	}
	return max(now.Sub(t), 0), true
}

// fleetOf builds the view from the leases and the stream's shards (listed
// tells whether shards is the stream's whole listing).
func fleetOf(all []lease.Lease, shards []feed.Shard, listed bool, dur time.Duration, now time.Time) ([]FleetShard, []FleetWorker) {
	byKey := map[string]lease.Lease{}
	for _, l := range all {
		byKey[l.Key] = l
	}
	isListed := map[string]bool{}
	closed := map[string]bool{}
	for _, s := range shards {
		isListed[s.ID], closed[s.ID] = true, s.Closed()
	}
	finished := func(id string) bool { l, ok := byKey[id]; return ok && l.Finished() }
	// readable: every parent finished, or gone (no lease, not listed)
	readable := func(parents []string) bool {
		for _, p := range parents {
			if _, has := byKey[p]; (has && !finished(p)) || (!has && isListed[p]) {
				return false
			}
		}
		return true
	}
	var out []FleetShard
	add := func(id string, parents []string) {
		s := FleetShard{ID: id, Parents: parents, Listed: isListed[id], Closed: closed[id]}
		l, has := byKey[id]
		if has {
			s.HasLease, s.Owner, s.StealBy, s.Checkpoint, s.Heartbeat = true, l.Owner, l.StealBy, l.Checkpoint, l.Heartbeat
			s.Expired = l.Owner != "" && !l.Heartbeat.IsZero() && now.Sub(l.Heartbeat) > dur
		}
		switch {
		case s.Checkpoint == lease.ShardEnd:
			s.State = ShardFinished
		case !readable(parents):
			s.State = ShardWaiting
		case s.Owner == "" || s.Expired:
			s.State = ShardUnowned
			s.UnownedFor, s.UnownedKnown = unownedFor(s, parents, byKey, dur, now)
		case s.Closed:
			s.State = ShardClosed
		default:
			s.State = ShardOpen
		}
		out = append(out, s)
	}
	for _, s := range shards {
		var parents []string
		if l, ok := byKey[s.ID]; ok && len(l.Parents) > 0 {
			parents = l.Parents
		} else {
			parents = s.Parents()
		}
		add(s.ID, parents)
	}
	for _, l := range all { // leases of shards the stream no longer lists
		if !isListed[l.Key] {
			add(l.Key, l.Parents)
		}
	}
	sortShards(out)
	return out, workersOf(all, dur, now)
}

// unownedFor is how long a readable shard without a live owner has been
// so: since its release (its heartbeat), since its owner's lease expired,
// or, without a lease, since its parent finished.
func unownedFor(s FleetShard, parents []string, byKey map[string]lease.Lease, dur time.Duration, now time.Time) (time.Duration, bool) {
	var since time.Time
	switch {
	case s.Expired:
		since = s.Heartbeat.Add(dur)
	case s.HasLease:
		since = s.Heartbeat
	default:
		for _, p := range parents {
			if pl, ok := byKey[p]; ok && pl.Heartbeat.After(since) {
				since = pl.Heartbeat
			}
		}
	}
	if since.IsZero() {
		return 0, false
	}
	return max(now.Sub(since), 0), true
}

// sortShards puts parents before their children, otherwise by id.
func sortShards(ss []FleetShard) {
	depth := map[string]int{}
	parents := map[string][]string{}
	for _, s := range ss {
		parents[s.ID] = s.Parents
	}
	var d func(id string, seen int) int
	d = func(id string, seen int) int {
		if v, ok := depth[id]; ok || seen > len(ss) {
			return v
		}
		n := 0
		for _, p := range parents[id] {
			if _, ok := parents[p]; ok {
				n = max(n, d(p, seen+1)+1)
			}
		}
		depth[id] = n
		return n
	}
	slices.SortStableFunc(ss, func(a, b FleetShard) int {
		return cmp.Or(cmp.Compare(d(a.ID, 0), d(b.ID, 0)), cmp.Compare(a.ID, b.ID))
	})
}

func workersOf(all []lease.Lease, dur time.Duration, now time.Time) []FleetWorker {
	ws := map[string]*FleetWorker{}
	get := func(id string) *FleetWorker {
		w := ws[id]
		if w == nil {
			w = &FleetWorker{ID: id}
			ws[id] = w
		}
		return w
	}
	for _, l := range all {
		if l.Owner != "" {
			w := get(l.Owner)
			w.Shards = append(w.Shards, l.Key)
			if l.Heartbeat.After(w.LastRenewal) {
				w.LastRenewal = l.Heartbeat
			}
		}
		if l.StealBy != "" {
			w := get(l.StealBy)
			w.Asking = append(w.Asking, l.Key)
		}
	}
	out := make([]FleetWorker, 0, len(ws))
	for _, w := range ws {
		slices.Sort(w.Shards)
		slices.Sort(w.Asking)
		w.Alive = !w.LastRenewal.IsZero() && now.Sub(w.LastRenewal) <= dur
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b FleetWorker) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// pluginsOf sets each worker's plugin versions from the status it
// published last.
func pluginsOf(ws []FleetWorker, published []lease.WorkerStatus) {
	latest := map[string]lease.WorkerStatus{}
	for _, p := range published {
		if q, ok := latest[p.Worker]; !ok || p.At.After(q.At) {
			latest[p.Worker] = p
		}
	}
	for i := range ws {
		var st workerStatus
		if p, ok := latest[ws[i].ID]; ok && json.Unmarshal([]byte(p.Status), &st) == nil && len(st.Plugins) > 0 {
			ws[i].Plugins = st.Plugins
		}
	}
}
