package sidecar

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/internal/keys"
)

// attempt is what the shard's reader knows of a record that failed.
type attempt struct {
	first time.Time
	n     int
	// warned is the reason of the last warning logged for the record.
	warned string
}

// deliveries holds one shard's failed records by sequence number, and the
// event failures it gave records up for (in memory: a new owner of the
// shard counts from zero).
type deliveries struct {
	attempts map[string]*attempt
	stuck    map[string]bool // eventCause of records given up
	// noTable is set while the shard's lowest failed record fails on a
	// table that does not exist (the last delivery's): it waits for the
	// table with a longer backoff, its attempts not counted.
	noTable bool
}

// failure is the lowest failed record of a delivery.
type failure struct {
	pos         int
	projections []string // "" for a failure of no projection (decode, whole batch)
	reason      string
	// causes are the failure's event causes (eventCause), one per failed
	// row or instance, when every part of it is such a failure; else nil.
	causes []string
	// behind is set when the record is given up at once: it fails behind
	// an event a record was given up for before.
	behind bool
	// noTable is set when some part of the failure is a request on a table
	// that does not exist (a rows table, the event table or an outbox
	// deleted): the operator's mistake, not the record's. tables names
	// them ("" for a request that names none).
	noTable bool
	tables  []string
	// misread is set when some part of the failure is a row the
	// configuration cannot read as its own (a misspelled checkpoint
	// field, host.ErrCheckpointMissing): the configuration's mistake, not
	// the record's, waited out as a missing table is.
	misread bool
}

// deliver hands recs to the host under the failure policy. It returns n,
// the number of records done (processed, or given up to the on-failure
// destination), and whether recs[n] failed and must be delivered again.
func (r *Reader) deliver(ctx context.Context, stream, shard string, recs []host.Record, ds *deliveries) (int, bool) {
	start := 0
	waited := ds.noTable
	ds.noTable = false
	defer func() {
		if waited && !ds.noTable {
			r.tablesBack(shard)
		}
	}()
	for start < len(recs) {
		f, ok := r.process(ctx, stream, shard, recs[start:])
		if ctx.Err() != nil {
			return start, true
		}
		if !ok {
			break
		}
		i := start + f.pos
		rec := recs[i]
		seq := rec.DynamoDB.SequenceNumber
		if f.noTable {
			// A table deleted (or not created yet) fails every record
			// alike: the record is not to blame, so its attempts are not
			// counted and it is never given up for it; the shard waits,
			// retrying with a longer backoff, until the table is back.
			ds.noTable = true
			r.warnNoTable(ctx, shard, seq, f)
			return i, true
		}
		if f.misread {
			// So does a configuration that cannot read its rows (a
			// misspelled checkpoint field): the shard waits, its records
			// kept, until the workers restart with the configuration fixed.
			ds.noTable = true
			r.warnMisread(ctx, shard, seq, f)
			return i, true
		}
		a := ds.attempts[seq]
		if a == nil {
			a = &attempt{first: r.ageClock()}
			ds.attempts[seq] = a
		}
		a.n++
		// A record that fails behind an event already given up on this
		// shard is given up at its first failure: it cannot get past that
		// event, and each retry of each later record of the row would hold
		// the shard (seconds each, behind one bad event).
		f.behind = !r.neverGivenUp(f.projections) && ds.givenUpBefore(f)
		if !f.behind && !r.exhausted(f.projections, a, rec) {
			// A warning at a failing record's first failure, and again
			// whenever its reason changes (a plugin swapped meanwhile fails
			// it another way) and, for a record no policy will give up, at
			// its 10th, 100th, 1000th ... attempt, so that its shard's wait
			// shows in the log. A bisect runs the record in every half it
			// splits, and each retry fails it the same way; those say
			// nothing new (debug), and a record given up is logged as an
			// error.
			never := r.neverGivenUp(f.projections)
			level := slog.LevelDebug
			if a.n == 1 || f.reason != a.warned || (never && powerOfTen(a.n)) {
				level = slog.LevelWarn
				a.warned = f.reason
			}
			labels := make([]string, len(f.projections))
			for i, p := range f.projections {
				labels[i] = projectionLabel(p)
			}
			args := []any{"shard", shard, "sequenceNumber", seq, "attempt", a.n, "projections", labels, "reason", f.reason}
			if a.n > 1 {
				args = append(args, "failingSince", a.first.UTC().Format(time.RFC3339))
			}
			switch {
			case level == slog.LevelWarn && never:
				args = append(args, "hint", neverGivenUpHint)
			case level == slog.LevelWarn:
				// when the shard stops waiting for it: a record that fails
				// slowly (a plugin call that runs to its timeout, in every
				// half of a bisect) can hold the shard for minutes
				args = append(args, "givenUp", r.givenUpWhen(f.projections, a))
			}
			r.log.Log(ctx, level, "record failed; it is delivered again", args...)
			return i, true
		}
		if err := r.giveUp(ctx, stream, shard, rec, f, a); err != nil {
			r.log.Error("sending a given-up record to its on-failure destination failed; it is delivered again", "shard", shard, "sequenceNumber", seq, "err", why(err))
			return i, true
		}
		ds.remember(f)
		delete(ds.attempts, seq)
		start = i + 1
	}
	for _, rec := range recs {
		delete(ds.attempts, rec.DynamoDB.SequenceNumber)
	}
	return len(recs), false
}

// powerOfTen reports whether n is 10, 100, 1000 ...
func powerOfTen(n int) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}

// exhausted reports whether every failing projection's policy gives the
// record up: it has an on-failure destination, and the record's attempts
// are past maxRetries or it is older than maxRecordAge. The most patient
// policy wins; a policy without a destination never gives a record up.
func (r *Reader) exhausted(projections []string, a *attempt, rec host.Record) bool {
	for _, p := range projections {
		pol := r.sc.Policy(p)
		if pol.OnFailure == nil {
			return false
		}
		byRetries := *pol.MaxRetries >= 0 && a.n > *pol.MaxRetries
		age := time.Duration(pol.MaxRecordAge)
		created := rec.DynamoDB.ApproximateCreationDateTime
		if created.IsZero() {
			created = a.first
		}
		byAge := age > 0 && r.ageClock().Sub(created) > age
		if !byRetries && !byAge {
			return false
		}
	}
	return true
}

// givenUpWhen says when the failure policies will give up a record that
// keeps failing as it does: after which attempt, or past which age (the
// most patient policy's, as exhausted decides).
func (r *Reader) givenUpWhen(projections []string, a *attempt) string {
	retries, age := 0, time.Duration(0)
	for _, p := range projections {
		pol := r.sc.Policy(p)
		if n := *pol.MaxRetries; retries >= 0 && (n < 0 || n > retries) {
			retries = n
		}
		age = max(age, time.Duration(pol.MaxRecordAge))
	}
	var parts []string
	if retries >= 0 {
		left := retries + 1 - a.n
		parts = append(parts, fmt.Sprintf("after attempt %d (maxRetries %d; %d more)", retries+1, retries, max(left, 0)))
	}
	if age > 0 {
		parts = append(parts, fmt.Sprintf("once it is older than %s (maxRecordAge)", age))
	}
	return strings.Join(parts, ", or ") + ", to its onFailure destination for `host quarantine`"
}

// projectionLabel is how a log line names a failure's projection: a
// record that fails before any projection (it does not decode, or the
// whole batch failed) has none.
func projectionLabel(p string) string {
	if p == "" {
		return "(none: the record failed before any projection)"
	}
	return p
}

// neverGivenUpHint tells an operator, on a record's first failure, what
// the shard does when no projection's policy can set the record aside.
const neverGivenUpHint = "no failure policy with an onFailure destination covers this projection, so the record is retried until it succeeds and its shard waits behind it (the lag grows); fix the cause, or set sidecar.failure (maxRetries and onFailure) to set such records aside for `host quarantine`"

// neverGivenUp reports whether some failing projection has no on-failure
// destination: then the record is retried until it succeeds.
func (r *Reader) neverGivenUp(projections []string) bool {
	for _, p := range projections {
		if r.sc.Policy(p).OnFailure == nil {
			return true
		}
	}
	return false
}

// giveUp sends the record to each failing projection's destination and
// tells the observer.
func (r *Reader) giveUp(ctx context.Context, stream, shard string, rec host.Record, f failure, a *attempt) error {
	for _, p := range f.projections {
		d, err := r.destination(ctx, p)
		if err != nil {
			return err
		}
		e := quarantine.Entry{Projection: p, Stream: stream, Shard: shard, Record: rec, Reason: f.reason, FirstSeen: a.first, Attempts: a.n}
		if d != nil {
			if err := d.Send(ctx, e); err != nil {
				return fmt.Errorf("projection %q: %w", p, err)
			}
		}
		args := []any{"projection", projectionLabel(p), "shard", shard, "sequenceNumber", rec.DynamoDB.SequenceNumber,
			"attempts", a.n, "firstSeen", a.first, "reason", f.reason, "sentToDestination", d != nil}
		if f.behind {
			args = append(args, "givenUpAtOnce", "a record of this row was given up for the same failure (the event it fails on, the plugin's call, or the row's item over 400 KB); it fails the same way until that event is repaired or the plugin is fixed, then replay both")
		}
		r.log.Error("record given up", args...)
		r.obs.RecordGivenUp(p, stream, shard, rec, f.reason)
	}
	r.givenUp.Add(1)
	return nil
}

func (r *Reader) destination(ctx context.Context, projection string) (dst quarantine.Destination, err error) {
	pol := r.sc.Policy(projection)
	if pol.OnFailure == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.dests[projection]; ok {
		return d, nil
	}
	d, err := r.opts.Destinations(ctx, projection, *pol.OnFailure)
	if err != nil {
		return nil, fmt.Errorf("on-failure destination of projection %q: %w", projection, err)
	}
	r.dests[projection] = d
	return d, nil
}

// process runs recs through the host and returns its lowest failed record.
// When a failing projection's policy bisects, a failed batch of more than
// one record is split in halves, the first delivered before the second,
// until the failing record is found alone: only it is counted as failed.
func (r *Reader) process(ctx context.Context, stream, shard string, recs []host.Record) (failure, bool) {
	t0 := time.Now()
	res, err := r.h.ProcessBatch(ctx, recs)
	if err == nil {
		// a paused projection's instances are kept before the checkpoint
		// can pass them
		if err = r.recordDeferred(ctx, res); err != nil {
			res = nil
		}
	}
	r.obs.BatchProcessed(stream, shard, res, time.Since(t0), err)
	if res != nil {
		// counted as the observer counts them (records_failed_total)
		r.failures.Add(int64(len(res.Failed())))
	}
	var f failure
	switch {
	case err != nil:
		f = failure{pos: 0, projections: []string{""}, reason: err.Error()}
		f.noteNoTable(err)
	default:
		r.countWritten(res)
		failed := res.Failed()
		if len(failed) == 0 {
			return failure{}, false
		}
		f = failureAt(res, failed[0])
	}
	if len(recs) == 1 || ctx.Err() != nil || !r.bisects(f.projections) {
		return f, true
	}
	half := len(recs) / 2
	if f, ok := r.process(ctx, stream, shard, recs[:half]); ok {
		return f, true
	}
	if f, ok := r.process(ctx, stream, shard, recs[half:]); ok {
		f.pos += half
		return f, true
	}
	// both halves went through: the failure did not last (a throttled
	// write, a lost race), but it was counted: say so, at most so often
	r.passed.note(r.log, shard, f.reason)
	return failure{}, false
}

func (r *Reader) bisects(projections []string) bool {
	for _, p := range projections {
		if *r.sc.Policy(p).BisectOnError {
			return true
		}
	}
	return false
}

func (r *Reader) countWritten(res *host.Result) {
	for _, pr := range res.Projections {
		for i := range pr.Rows {
			if pr.Rows[i].Written {
				r.written.Add(1)
			}
		}
	}
}

// failureAt names the projections that failed the record at pos, and why.
func failureAt(res *host.Result, pos int) failure {
	f := failure{pos: pos}
	var reasons []string
	allEvents := true
	cause := func(projection string, err error) {
		f.noteNoTable(err)
		f.misread = f.misread || errors.Is(err, host.ErrCheckpointMissing)
		c, ok := eventCause(projection, err)
		allEvents = allEvents && ok
		f.causes = append(f.causes, c)
	}
	for _, name := range sortedKeys(res.Projections) {
		pr := res.Projections[name]
		for i := range pr.Rows {
			o := &pr.Rows[i]
			if o.Failed() && slices.Contains(o.Positions, pos) {
				f.projections = append(f.projections, name)
				reasons = append(reasons, o.Err.Error()) // it names the projection and the row
				cause(name, o.Err)
				continue
			}
			// A row written without some of its stream instances: each
			// failed instance is its projection's failure, for its records.
			for _, in := range o.Instances {
				if in.Err != nil && slices.Contains(in.Positions, pos) {
					f.projections = append(f.projections, name)
					cause(name, in.Err)
					reasons = append(reasons, fmt.Sprintf("projection %s: row %s: stream instance %s#%s: %v", name, keys.String(o.Key), in.Source, in.StreamID, in.Err))
				}
			}
		}
		for _, kf := range pr.KeyFailures {
			if kf.Position == pos {
				f.projections = append(f.projections, name)
				reasons = append(reasons, fmt.Sprintf("projection %q: key: %v", name, kf.Err))
			}
		}
	}
	for _, df := range res.DecodeFailures {
		if df.Position == pos {
			f.projections = append(f.projections, "")
			reasons = append(reasons, fmt.Sprintf("decode: %v", df.Err))
		}
	}
	if len(f.projections) == 0 {
		f.projections = []string{""}
		reasons = append(reasons, "reported failed")
	}
	if !allEvents || len(f.causes) != len(reasons) {
		f.causes = nil // some part a retry may get past
	}
	f.projections = slices.Compact(f.projections)
	f.reason = strings.Join(reasons, "; ")
	return f
}

func sortedKeys(m map[string]host.ProjectionResult) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// noteNoTable notes err's table when err is a request on a table that
// does not exist.
func (f *failure) noteNoTable(err error) {
	if !errors.Is(err, store.ErrNoTable) {
		return
	}
	f.noTable = true
	var nt *store.NoTableError
	if errors.As(err, &nt) && !slices.Contains(f.tables, nt.Table) {
		f.tables = append(f.tables, nt.Table)
	}
}

// warnNoTable logs, once per table until it is back, that a table the
// projections read or write does not exist and that the shard waits for it.
func (r *Reader) warnNoTable(ctx context.Context, shard, seq string, f failure) {
	r.mu.Lock()
	var fresh []string
	for _, t := range f.tables {
		if !r.noTables[t] {
			r.noTables[t] = true
			fresh = append(fresh, t)
		}
	}
	r.mu.Unlock()
	if len(fresh) == 0 {
		r.log.Debug("record failed on a table that does not exist; it is delivered again", "shard", shard, "sequenceNumber", seq, "reason", f.reason)
		return
	}
	names := make([]string, len(fresh))
	for i, t := range fresh {
		names[i] = cmp.Or(t, "(named by none of the failed requests)")
	}
	r.log.Log(ctx, slog.LevelWarn, "a table the projections read or write does not exist: the shards wait for it, retrying every "+noTableDelay.Max.String()+
		" at most, and no record is given up or counted against its retries for it; create it with `host tables create --config FILE` (or check the configuration's table names, endpoint and region)",
		"tables", names, "shard", shard, "sequenceNumber", seq, "reason", f.reason)
}

// warnMisread logs once per reader that the configuration cannot read the
// projection's rows as its own and that the shards wait.
func (r *Reader) warnMisread(ctx context.Context, shard, seq string, f failure) {
	if r.misreadWarned.Swap(true) {
		r.log.Debug("record failed on a row the configuration cannot read; it is delivered again", "shard", shard, "sequenceNumber", seq, "reason", f.reason)
		return
	}
	r.log.Log(ctx, slog.LevelError, "the configuration cannot read the projection's rows as its own (the reason says which attribute): the shards wait, retrying every "+noTableDelay.Max.String()+
		" at most, and no record is given up or counted against its retries for it; fix the configuration, then restart the workers one at a time",
		"shard", shard, "sequenceNumber", seq, "reason", f.reason)
}

// tablesBack logs that the records waiting for a missing table go through
// again, once.
func (r *Reader) tablesBack(shard string) {
	r.mu.Lock()
	var names []string
	for t := range r.noTables {
		names = append(names, t)
	}
	clear(r.noTables)
	r.mu.Unlock()
	if len(names) > 0 {
		slices.Sort(names)
		r.log.Info("the table that did not exist answers again; reading on", "tables", names, "shard", shard)
	}
}
