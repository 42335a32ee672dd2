package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// FindingKind names what a verification found wrong with a row.
type FindingKind string

// The kinds of finding.
const (
	// FindingDiffers: the stored row is not what its events make (an
	// attribute differs, or its checkpoints have not passed events older
	// than the grace).
	FindingDiffers FindingKind = "differs"
	// FindingMissing: the events make a row the table lacks.
	FindingMissing FindingKind = "missing"
	// FindingOrphan: a row (not a tombstone) that no event addresses.
	FindingOrphan FindingKind = "orphan"
	// FindingAhead: a checkpoint above its stream instance's head; only
	// lost or edited data does that.
	FindingAhead FindingKind = "ahead"
)

// DefaultVerifyGrace is how young an event may be and still be taken as
// lag rather than drift when VerifyOptions.Grace is 0.
const DefaultVerifyGrace = 2 * time.Minute

// DefaultVerifySegments is the number of parallel scan segments when
// VerifyOptions.Segments is 0.
const DefaultVerifySegments = 4

// VerifyOptions configures Verify.
type VerifyOptions struct {
	// Projection is the projection to verify ("": every projection).
	Projection string
	// Segments is the number of parallel scan segments of each table
	// (default DefaultVerifySegments).
	Segments int
	// Sample, between 0 and 1 exclusive, checks a random fraction of the
	// rows: the scans read that fraction of each table's segments (0 or 1:
	// every row).
	Sample float64
	// Grace is the age under which an event the row lacks is lag, counted
	// as pending, not drift (default DefaultVerifyGrace).
	Grace time.Duration
	// PausedSince names projections paused (host pause) since a time: an
	// event of such a projection appended after that time, less Grace, is
	// counted as pending too, since the pause holds it back on purpose.
	PausedSince map[string]time.Time
	// Repair rebuilds every row found differing, missing or ahead through
	// the rebuild's write conditions, and checks it again. Orphans are
	// left alone: removing data is the operator's decision.
	Repair bool
	// Progress, when set, is told how many rows there are to check and
	// when each is checked.
	Progress VerifyProgress
	// OnFinding, when set, is called with each finding as it is made
	// (after its repair, with Repair), from one goroutine at a time.
	OnFinding func(Finding)
	// Seed seeds the sample's random choice (0: a random seed).
	Seed uint64
	// Now is the clock events' ages are measured by (default time.Now).
	Now func() time.Time
	// Logger logs rows that could not be checked (default: the host's).
	Logger *slog.Logger
}

// VerifyProgress is told how far a verification is.
type VerifyProgress interface {
	Start(total int) // the rows to check (called once per projection)
	Add(n int)       // n more rows checked
	Finish()         // the projection is done
}

// AttrDiff is one attribute path whose stored value differs from the one
// the events make. A nil value is absent.
type AttrDiff struct {
	Path   string // "total", "lines[2].qty", "checkpoints.order#o-1"
	Stored *abi.Value
	Fold   *abi.Value
}

// EventRef names one event of a stream instance.
type EventRef struct {
	Instance InstanceRef
	Version  uint64
}

// AheadCheckpoint is a checkpoint above its instance's head.
type AheadCheckpoint struct {
	Instance   InstanceRef
	Checkpoint uint64 // what the row holds
	Head       uint64 // the instance's last version
}

// Finding is one row found wrong.
type Finding struct {
	Kind       FindingKind
	Projection string
	Key        abi.Item
	// Diffs are the attribute paths that differ (differs, and ahead when
	// the state differs too), sorted by path.
	Diffs []AttrDiff
	// Unapplied are events older than the grace that address the row and
	// that its checkpoints have not passed.
	Unapplied []EventRef
	// Ahead are the checkpoints above their instance's head.
	Ahead []AheadCheckpoint
	// Stored is the item the table holds (nil: missing).
	Stored abi.Item
	// Fold is the item the events make, as a rebuild would write it (nil:
	// they make none).
	Fold abi.Item
	// Instances are the stream instances that feed the row.
	Instances []InstanceRef
	// Repaired is set when Repair rebuilt the row and a check after found
	// nothing; RepairErr is why it was not.
	Repaired  bool
	RepairErr error
}

// VerifyCounts are a verification's totals.
type VerifyCounts struct {
	Rows      int // stored items checked (tombstones included)
	Events    int // events read from the event store
	Pending   int // events younger than the grace that their rows lack: lag, not drift
	Differs   int
	Missing   int
	Orphan    int
	Ahead     int
	Repaired  int // findings repaired (with Repair)
	Errors    int // rows that could not be checked
	Unchecked int // rows no instance could be named for (a sample, or a table other projections share)
}

// Drift is the number of findings.
func (c VerifyCounts) Drift() int { return c.Differs + c.Missing + c.Orphan + c.Ahead }

func (c *VerifyCounts) add(o VerifyCounts) {
	c.Rows += o.Rows
	c.Events += o.Events
	c.Pending += o.Pending
	c.Differs += o.Differs
	c.Missing += o.Missing
	c.Orphan += o.Orphan
	c.Ahead += o.Ahead
	c.Repaired += o.Repaired
	c.Errors += o.Errors
	c.Unchecked += o.Unchecked
}

// ProjectionVerify is what Verify found for one projection.
type ProjectionVerify struct {
	Projection string
	Table      string
	VerifyCounts
}

// RowCheckError is a row that could not be checked.
type RowCheckError struct {
	Projection string
	Key        abi.Item // nil when the error is not a row's (an event item that does not decode)
	Err        error
}

// Error implements error.
func (e *RowCheckError) Error() string {
	if re := (*apply.RowError)(nil); errors.As(e.Err, &re) && re.Projection == e.Projection {
		return e.Err.Error() // the engine's error names the projection and the row already
	}
	if e.Key == nil {
		return fmt.Sprintf("projection %q: %v", e.Projection, e.Err)
	}
	return fmt.Sprintf("projection %q row %s: %v", e.Projection, keyText(e.Key), e.Err)
}

// Unwrap returns the cause.
func (e *RowCheckError) Unwrap() error { return e.Err }

// VerifyReport is what Verify found and did.
type VerifyReport struct {
	Projections []ProjectionVerify
	Findings    []Finding
	Errors      []*RowCheckError
	Took        time.Duration
}

// Total sums the projections' counts.
func (r VerifyReport) Total() VerifyCounts {
	var c VerifyCounts
	for _, p := range r.Projections {
		c.add(p.VerifyCounts)
	}
	return c
}

// Unrepaired is the number of findings left as they were: every finding
// without Repair, those whose repair failed with it (orphans always).
func (r VerifyReport) Unrepaired() int {
	n := 0
	for _, f := range r.Findings {
		if !f.Repaired {
			n++
		}
	}
	return n
}

// ErrVerifyOptions is matched by Verify's error for options that cannot
// work.
var ErrVerifyOptions = errors.New("invalid verify options")

// Verify reconciles read models with the event store: every row of each
// projection's table is re-folded from its events exactly as a rebuild
// would fold it, without writing, and compared with the stored item; the
// event store is walked too, for rows its events make that the table
// lacks. The table is scanned before the event store (strongly
// consistent, in parallel segments), so every event a row was written
// from is read. Events younger than the grace at the row's read are lag,
// not drift: counted as pending. A row found wrong is read again, with
// its events, before it is reported, so a row the live feed changes while
// it is checked is never reported falsely.
//
// A full verification holds each projection's events in memory; Sample
// checks a fraction of the rows (and of the event store) instead. The
// error is set only when the verification could not run; rows that could
// not be checked are in the report's Errors.
func (h *Host) Verify(ctx context.Context, o VerifyOptions) (VerifyReport, error) {
	start := time.Now()
	var rep VerifyReport
	if err := o.setDefaults(h); err != nil {
		return rep, err
	}
	names := h.order
	if o.Projection != "" {
		if _, err := h.engine(o.Projection); err != nil {
			return rep, err
		}
		names = []string{o.Projection}
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	for _, name := range names {
		v, err := h.newVerifier(name, o, rng)
		if err != nil {
			return rep, err
		}
		pv, err := v.run(ctx)
		rep.Projections = append(rep.Projections, pv)
		rep.Findings = append(rep.Findings, v.findings...)
		rep.Errors = append(rep.Errors, v.errs...)
		if err != nil {
			rep.Took = time.Since(start)
			return rep, fmt.Errorf("verify of projection %q: %w", name, err)
		}
	}
	rep.Took = time.Since(start)
	return rep, nil
}

func (o *VerifyOptions) setDefaults(h *Host) error {
	switch {
	case o.Segments < 0:
		return fmt.Errorf("%w: segments %d is negative: use 1 or more (0: %d)", ErrVerifyOptions, o.Segments, DefaultVerifySegments)
	case o.Segments > 1_000_000:
		return fmt.Errorf("%w: segments %d: DynamoDB scans in at most 1000000 segments", ErrVerifyOptions, o.Segments)
	case o.Sample < 0 || o.Sample > 1:
		return fmt.Errorf("%w: sample %g is not a fraction: use a number above 0 and at most 1 (0.01 checks 1%% of the rows)", ErrVerifyOptions, o.Sample)
	case o.Grace < 0:
		return fmt.Errorf("%w: grace %s is negative: use 0 or more (0: %s)", ErrVerifyOptions, o.Grace, DefaultVerifyGrace)
	}
	if o.Segments == 0 {
		o.Segments = DefaultVerifySegments
	}
	if o.Grace == 0 {
		o.Grace = DefaultVerifyGrace
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = h.log
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64()
	}
	return nil
}
