package sidecar

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/dynafold/dynafold/host/internal/lease"
)

// FleetVerify is the last continuous verification pass of a projection
// run by any worker of the fleet (the sidecar section's "verify"), as the
// lease table keeps it.
type FleetVerify struct {
	Projection string
	Worker     string        // the worker that ran it
	At         time.Time     // when it finished, by that worker's clock (zero: none finished yet)
	Took       time.Duration // how long it ran
	Sample     float64       // the fraction of the rows it checked
	// Rows, Events, Pending and the drift found per kind; Errors are rows
	// that could not be checked, Unchecked rows whose stream instances the
	// sample could not name.
	Rows, Events, Pending, Differs, Missing, Orphan, Ahead, Errors, Unchecked int64
	Next                                                                      time.Time // when the next pass is due
}

// Drift is the number of rows the pass found wrong.
func (v FleetVerify) Drift() int64 { return v.Differs + v.Missing + v.Orphan + v.Ahead }

// fleetVerify reads the verification items of the lease table.
func fleetVerify(ctx context.Context, lt *lease.Table) ([]FleetVerify, error) {
	rs, err := lt.VerifyResults(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]FleetVerify, 0, len(rs))
	for _, r := range rs {
		c := r.Counts
		out = append(out, FleetVerify{Projection: r.Projection, Worker: r.Worker, At: r.At, Took: r.Took, Sample: r.Sample, Next: r.Next,
			Rows: c["rows"], Events: c["events"], Pending: c["pending"], Differs: c["differs"], Missing: c["missing"],
			Orphan: c["orphan"], Ahead: c["ahead"], Errors: c["errors"], Unchecked: c["unchecked"]})
	}
	slices.SortFunc(out, func(a, b FleetVerify) int { return cmp.Compare(a.Projection, b.Projection) })
	return out, nil
}
