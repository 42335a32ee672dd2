package sidecar

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/internal/keys"
)

// VerifyObserver is an Observer that is also told what each continuous
// verification pass (the sidecar section's "verify") found for a
// projection; telemetry.Metrics is one. err is set when the pass could
// not run.
type VerifyObserver interface {
	Verified(projection string, counts host.VerifyCounts, at time.Time, took time.Duration, err error)
}

// verifyLoop runs the continuous verification until ctx ends: every
// interval (with a little jitter, so the fleet's workers do not all try
// at once) it claims each projection's next pass in the lease table and,
// when the claim is its own, verifies a sample of the projection's rows
// and records what it found (lease table, observer, log).
func (r *Reader) verifyLoop(ctx context.Context) {
	v := r.sc.Verify.Effective()
	every := time.Duration(v.Every)
	timer := time.NewTimer(jitter(every))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		for _, p := range r.h.Projections() {
			if ctx.Err() != nil {
				return
			}
			r.verifyPass(ctx, p, v, every)
		}
		timer.Reset(jitter(every))
	}
}

// jitter is every, give or take a tenth.
func jitter(every time.Duration) time.Duration {
	return every - every/10 + time.Duration(rand.Int64N(int64(every/5)+1))
}

// verifyPass runs one pass over a projection when this worker claims it.
func (r *Reader) verifyPass(ctx context.Context, projection string, v host.VerifyConfig, every time.Duration) {
	mine, err := r.leases.ClaimVerify(ctx, projection, r.sc.WorkerID, time.Now(), every)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("verify: claiming the pass failed; trying at the next interval", "projection", projection, "err", why(err))
		}
		return
	}
	if !mine {
		return // another worker runs this interval's pass
	}
	if r.h.IsPaused(projection) || r.Deferred()[projection] > 0 {
		// a paused projection's rows lack what it holds back on purpose
		// until the resume has caught them up: not drift
		r.log.Info("verify: the pass is skipped while the projection is paused or catching up what it skipped", "projection", projection)
		return
	}
	start := time.Now()
	rep, err := r.h.Verify(ctx, host.VerifyOptions{Projection: projection, Sample: v.Sample, Grace: time.Duration(v.Grace),
		Segments: v.Segments, Logger: r.log})
	took := time.Since(start)
	if err != nil && ctx.Err() != nil {
		return // stopping
	}
	c := rep.Total()
	if o, ok := r.obs.(VerifyObserver); ok {
		o.Verified(projection, c, time.Now(), took, err)
	}
	if err != nil {
		r.log.Error("verify: the pass could not run", "projection", projection, "err", why(err))
		return
	}
	res := lease.VerifyResult{Projection: projection, Worker: r.sc.WorkerID, At: time.Now(), Took: took, Sample: v.Sample,
		Counts: map[string]int64{"rows": int64(c.Rows), "events": int64(c.Events), "pending": int64(c.Pending), "differs": int64(c.Differs),
			"missing": int64(c.Missing), "orphan": int64(c.Orphan), "ahead": int64(c.Ahead), "errors": int64(c.Errors), "unchecked": int64(c.Unchecked)}}
	if err := r.leases.PutVerifyResult(ctx, res); err != nil && ctx.Err() == nil {
		r.log.Warn("verify: recording the pass failed", "projection", projection, "err", why(err))
	}
	if c.Drift() == 0 && c.Errors == 0 {
		r.log.Info("verify: no drift in the sample", "projection", projection, "rows", c.Rows, "unverified", 0, "pending", c.Pending, "took", took.Round(time.Millisecond))
		return
	}
	if c.Drift() == 0 {
		r.log.Warn(fmt.Sprintf("verify: no drift in the sample, but %d of its rows could not be checked, so they are not verified; run `host verify --projection %s` to see why", c.Errors, projection),
			"projection", projection, "rows", c.Rows, "unverified", c.Errors, "pending", c.Pending, "took", took.Round(time.Millisecond))
		return
	}
	r.log.Warn("verify: drift found in the sample; run `host verify --projection "+projection+"` to see every row, and --repair to rebuild them",
		"projection", projection, "rows", c.Rows, "differs", c.Differs, "missing", c.Missing, "orphan", c.Orphan, "ahead", c.Ahead, "unverified", c.Errors)
	for i, f := range rep.Findings {
		if i == 10 {
			r.log.Warn("verify: more findings not logged", "projection", projection, "more", len(rep.Findings)-i)
			break
		}
		r.log.Warn("verify: finding", "projection", projection, "kind", string(f.Kind), "row", keys.String(f.Key))
	}
}
