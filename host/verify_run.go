package host

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// verifier verifies one projection.
type verifier struct {
	h      *Host
	e      *apply.Engine
	p      apply.Projection
	o      VerifyOptions
	rng    *rand.Rand
	shared bool // another projection keeps its rows in the same table
	ignore map[string]bool

	rows  map[string]*storedRow // the table's items read, by key string
	order []string              // their keys, in scan order
	index map[string]*indexRow  // the rows the walked events address
	insts map[streamKey]*instEvents

	mu       sync.Mutex // guards what follows, and insts after the walk
	counts   VerifyCounts
	findings []Finding
	errs     []*RowCheckError
	report   sync.Mutex // serializes OnFinding
}

func (h *Host) newVerifier(projection string, o VerifyOptions, rng *rand.Rand) (*verifier, error) {
	e, err := h.engine(projection)
	if err != nil {
		return nil, err
	}
	v := &verifier{h: h, e: e, p: e.Projection(), o: o, rng: rng, ignore: map[string]bool{},
		rows: map[string]*storedRow{}, index: map[string]*indexRow{}, insts: map[streamKey]*instEvents{}}
	for _, a := range e.EngineAttrs() {
		v.ignore[a] = true
	}
	for _, pc := range h.cfg.Projections {
		switch {
		case pc.Name == projection && pc.WrittenBy != "":
			// a hot-swapped plugin's engine leaves it to the plugin
			v.ignore[pc.WrittenBy], v.ignore[apply.WrittenByBefore(pc.WrittenBy)] = true, true
		case pc.Name != projection && pc.Table == v.p.Table:
			v.shared = true
		}
	}
	return v, nil
}

func (v *verifier) workers() int { return max(8, 2*v.o.Segments) }

// run verifies the projection: the table first, then the event store
// (so every event a row read was written from is read), then each row.
func (v *verifier) run(ctx context.Context) (ProjectionVerify, error) {
	pv := ProjectionVerify{Projection: v.p.Name, Table: v.p.Table}
	// A sample of a table whose rows cannot name their stream instances
	// would find rows it cannot check: the sample is then the rows of the
	// sampled instances alone.
	if !v.sampled() || v.rowsNameInstances() {
		if err := v.scanRows(ctx); err != nil {
			return pv, err
		}
	}
	if err := v.walkEvents(ctx); err != nil {
		v.mu.Lock()
		pv.VerifyCounts = v.counts
		v.mu.Unlock()
		return pv, err
	}
	// the rows the events address that the scan did not read: in a sample,
	// read them now (a row fed by a sampled instance is a sampled row); in
	// a full verification, they are missing unless created since the scan
	var others []string
	for ks := range v.index {
		if _, ok := v.rows[ks]; !ok {
			others = append(others, ks)
		}
	}
	if v.sampled() && len(others) > 0 {
		keys := make([]abi.Item, len(others))
		for i, ks := range others {
			keys[i] = v.index[ks].key
		}
		items, err := v.h.db.BatchGetItem(ctx, v.p.Table, keys)
		if err != nil {
			return pv, fmt.Errorf("reading the rows of the sampled stream instances: %w", err)
		}
		at, absent := v.o.Now(), others[:0]
		for i, ks := range others {
			if items[i] == nil {
				absent = append(absent, ks)
				continue
			}
			v.rows[ks] = &storedRow{key: keys[i], item: items[i], at: at}
			v.order = append(v.order, ks)
		}
		others = absent
	}
	total := len(v.order) + len(others)
	if v.o.Progress != nil {
		v.o.Progress.Start(total)
		defer v.o.Progress.Finish()
	}
	forEach(ctx, total, v.workers(), func(i int) {
		if i < len(v.order) {
			r := v.rows[v.order[i]]
			v.check(ctx, r.key, r.item, r.at, true)
		} else {
			ks := others[i-len(v.order)]
			v.check(ctx, v.index[ks].key, nil, v.o.Now(), false)
		}
		if v.o.Progress != nil {
			v.o.Progress.Add(1)
		}
	})
	v.mu.Lock()
	pv.VerifyCounts = v.counts
	v.mu.Unlock()
	return pv, ctx.Err()
}

func (v *verifier) sampled() bool { return v.o.Sample > 0 && v.o.Sample < 1 }

// rowsNameInstances reports whether a row names every stream instance
// that feeds it: each source keeps its checkpoints in the map or in a
// field with an instance field (or Projection.SourcesOf finds them).
func (v *verifier) rowsNameInstances() bool {
	if v.p.SourcesOf != nil {
		return true
	}
	cp := v.p.Checkpoint
	for i, s := range v.p.Sources {
		sc := cp.Sources[s.Name]
		if i == 0 && cp.Field != "" {
			sc = apply.Scalar{Field: cp.Field, Offset: cp.Offset, InstanceField: cp.InstanceField}
		}
		if sc.Field != "" && sc.InstanceField == "" {
			return false
		}
	}
	return true
}

// check verifies one row: the item stored as read at at (nil: none, a
// row the events address that the scan did not find). A finding is
// checked again from the row and its events read anew before it is
// reported.
func (v *verifier) check(ctx context.Context, key, stored abi.Item, at time.Time, scanned bool) {
	if stored != nil {
		v.count(func(c *VerifyCounts) { c.Rows++ })
		if err := v.e.CheckRow(stored); errors.Is(err, apply.ErrCheckpointMissing) {
			// the configuration does not read the row as its own (a
			// misspelled checkpoint field): not drift, which a repair
			// would write under the wrong name
			v.rowError(key, err)
			return
		}
	}
	res := v.checkOnce(ctx, key, stored, at, false)
	if res.err == nil && res.finding != nil {
		// read the row again, then its events after it
		again, err := v.h.db.GetItem(ctx, v.p.Table, key)
		if err != nil {
			res = rowCheck{err: fmt.Errorf("reading the row again: %w", err)}
		} else {
			if stored == nil && again != nil && !scanned {
				v.count(func(c *VerifyCounts) { c.Rows++ }) // created since the scan: a row after all
			}
			res = v.checkOnce(ctx, key, again, v.o.Now(), true)
		}
	}
	v.count(func(c *VerifyCounts) {
		c.Pending += res.pending
		if res.unchecked {
			c.Unchecked++
		}
	})
	if res.err != nil {
		v.rowError(key, res.err)
		return
	}
	if res.finding == nil {
		return
	}
	f := *res.finding
	if v.o.Repair && f.Kind != FindingOrphan {
		v.repair(ctx, &f)
	}
	v.count(func(c *VerifyCounts) {
		switch f.Kind {
		case FindingDiffers:
			c.Differs++
		case FindingMissing:
			c.Missing++
		case FindingOrphan:
			c.Orphan++
		case FindingAhead:
			c.Ahead++
		}
		if f.Repaired {
			c.Repaired++
		}
	})
	v.mu.Lock()
	v.findings = append(v.findings, f)
	v.mu.Unlock()
	if v.o.OnFinding != nil {
		v.report.Lock()
		v.o.OnFinding(f)
		v.report.Unlock()
	}
}

func (v *verifier) count(f func(c *VerifyCounts)) {
	v.mu.Lock()
	f(&v.counts)
	v.mu.Unlock()
}

// rowError records a row (nil key: an event item) that could not be
// checked.
func (v *verifier) rowError(key abi.Item, err error) {
	e := &RowCheckError{Projection: v.p.Name, Key: key, Err: err}
	v.o.Logger.Warn("verify: could not check", "projection", v.p.Name, "row", keyOrDash(key), "err", err.Error())
	v.mu.Lock()
	v.counts.Errors++
	v.errs = append(v.errs, e)
	v.mu.Unlock()
}

func keyOrDash(k abi.Item) string {
	if k == nil {
		return "-"
	}
	return keyText(k)
}
