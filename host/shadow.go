package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/batch"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/ddbjson"
	"github.com/dynafold/dynafold/internal/keys"
)

// Errors of Promote, matched with errors.Is.
var (
	// ErrNoShadow: the projection has no shadow plugin (or it was promoted).
	ErrNoShadow = errors.New("the projection has no shadow plugin")
	// ErrNotHotSwapped: the projection's plugin is not served through the
	// hot-swap pipeline, so nothing can swap the candidate in.
	ErrNotHotSwapped = errors.New("the projection's plugin is not served through hotSwap")
)

// ShadowStats counts what a projection's shadow plugin did.
type ShadowStats struct {
	Projection  string // the projection
	Candidate   string // the shadow plugin, "name@version"
	Plugin      string // its module, as configured
	Batches     uint64 // batches the candidate ran on
	Rows        uint64 // rows compared
	Differences uint64 // rows where the candidate's result differed from the live one
	Failures    uint64 // batches the candidate could not run on (logged)
}

// shadow is one projection's candidate: an engine over a dry store.
type shadow struct {
	projection, plugin, path, candidate string
	ignore                              map[string]bool // host-set attributes left out of comparisons
	proc                                *batch.Processor
	batches, rows, diffs, failures      atomic.Uint64
}

// shadowSet holds the shadows; Promote removes one while batches run.
type shadowSet struct {
	mu   sync.RWMutex
	list []*shadow
}

func (s *shadowSet) snapshot() []*shadow {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*shadow(nil), s.list...)
}

// newShadows builds the engine of every configured shadow plugin.
func (h *Host) newShadows(ctx context.Context, dopts decode.Options, o options) error {
	for _, pc := range h.cfg.Projections {
		if pc.Shadow == nil {
			continue
		}
		cand := pc
		cand.Plugin, cand.HotSwap, cand.Shadow = pc.Shadow.Plugin, nil, nil
		e, err := h.newEngine(ctx, cand, o, newDryStore(h.db, pc.Key, ""))
		if err != nil {
			return fmt.Errorf("projection %q: shadow plugin %s: %w", pc.Name, pc.Shadow.Plugin, err)
		}
		proc, err := batch.New(dopts, []*apply.Engine{e}, nil)
		if err != nil {
			return err
		}
		d := e.Projection().Logic.Describe()
		sh := &shadow{projection: pc.Name, plugin: pc.Shadow.Plugin, path: h.cfg.rel(pc.Shadow.Plugin),
			candidate: d.Name + "@" + d.Version, proc: proc, ignore: map[string]bool{}}
		for _, a := range pc.provenanceAttrs() {
			sh.ignore[a] = true
		}
		h.shadows.list = append(h.shadows.list, sh)
	}
	return nil
}

// shadowRun is one shadow's result on a batch.
type shadowRun struct {
	sh  *shadow
	res *batch.Result
}

// runShadows runs every shadow on a batch before the live projections
// write it, so each candidate reads the rows the live plugin reads.
func (h *Host) runShadows(ctx context.Context, run func(*batch.Processor) (*batch.Result, error)) []shadowRun {
	var out []shadowRun
	for _, sh := range h.shadows.snapshot() {
		if h.paused.is(sh.projection) {
			continue // the live plugin applies nothing to compare with
		}
		sh.batches.Add(1)
		res, err := run(sh.proc)
		if err != nil {
			sh.failures.Add(1)
			h.log.Warn("shadow plugin could not run on the batch; the live plugin is unaffected",
				"projection", sh.projection, "candidate", sh.candidate, "err", err)
			continue
		}
		out = append(out, shadowRun{sh, res})
	}
	return out
}

// compareShadows compares each shadow's rows with the live ones, counting
// and logging every row that differs.
func (h *Host) compareShadows(runs []shadowRun, live *batch.Result) {
	if live == nil {
		return
	}
	for _, r := range runs {
		cand, liveRows := r.res.Projections[r.sh.projection].Rows, live.Projections[r.sh.projection].Rows
		byKey := map[string]*apply.Outcome{}
		for i := range liveRows {
			byKey[keys.String(liveRows[i].Key)] = &liveRows[i]
		}
		for i := range cand {
			k := keys.String(cand[i].Key)
			l := byKey[k]
			delete(byKey, k)
			r.sh.report(h, k, compareRow(&cand[i], l, r.sh.ignore))
		}
		rest := make([]string, 0, len(byKey))
		for k := range byKey {
			rest = append(rest, k)
		}
		sort.Strings(rest)
		for _, k := range rest {
			r.sh.report(h, k, []string{"the live plugin wrote this row, the candidate names no such row"})
		}
	}
}

func (sh *shadow) report(h *Host, key string, diffs []string) {
	sh.rows.Add(1)
	if len(diffs) == 0 {
		return
	}
	sh.diffs.Add(1)
	h.log.Warn("shadow plugin differs from the live plugin", "projection", sh.projection,
		"candidate", sh.candidate, "key", key, "differences", strings.Join(diffs, "; "))
}

// compareRow lists how the candidate's outcome for a row differs from the
// live one (nil: the live plugin had no such row).
func compareRow(cand, live *apply.Outcome, ignore map[string]bool) []string {
	switch {
	case live == nil:
		return []string{"the candidate wrote a row the live plugin names no events for"}
	case cand.Err != nil && live.Err == nil:
		return []string{fmt.Sprintf("the candidate failed the row: %v", cand.Err)}
	case cand.Err == nil && live.Err != nil:
		return []string{fmt.Sprintf("the live plugin failed the row, the candidate did not (live: %v)", live.Err)}
	case cand.Err != nil:
		return nil // both failed: the row will be redelivered to both
	case cand.Removed != live.Removed:
		return []string{fmt.Sprintf("removed: live %v, candidate %v", live.Removed, cand.Removed)}
	}
	return ItemDiff(live.State, cand.State, ignore)
}

// ItemDiff lists the attributes whose values differ between two items,
// sorted, as "name: A → B" (absent: "-"), leaving out the names in ignore.
func ItemDiff(a, b abi.Item, ignore map[string]bool) []string {
	names := map[string]bool{}
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	var out []string
	for n := range names {
		if ignore[n] {
			continue
		}
		va, oka := a[n]
		vb, okb := b[n]
		if oka == okb && va.Equal(vb) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s → %s", n, valueText(va, oka), valueText(vb, okb)))
	}
	sort.Strings(out)
	return out
}

func valueText(v abi.Value, ok bool) string {
	if !ok {
		return "-"
	}
	b, err := ddbjson.ValueToJSON(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

// ShadowStats returns the counters of every shadow plugin still running,
// in configuration order.
func (h *Host) ShadowStats() []ShadowStats {
	var out []ShadowStats
	for _, sh := range h.shadows.snapshot() {
		out = append(out, ShadowStats{Projection: sh.projection, Candidate: sh.candidate, Plugin: sh.plugin,
			Batches: sh.batches.Load(), Rows: sh.rows.Load(), Differences: sh.diffs.Load(), Failures: sh.failures.Load()})
	}
	return out
}

// Promote makes a projection's shadow plugin the live one through the
// hot-swap pipeline (pins, validation, compatibility, smoke test): the
// projection must be served with hotSwap. Calls made after Promote returns
// use the candidate, and the shadow stops. It returns the version now
// serving; a refused candidate leaves the live version serving and the
// shadow running (the error is a *swap.CandidateError).
func (h *Host) Promote(ctx context.Context, projection string) (swap.Info, error) {
	if _, err := h.engine(projection); err != nil {
		return swap.Info{}, err
	}
	h.shadows.mu.Lock()
	defer h.shadows.mu.Unlock()
	at := -1
	for i, sh := range h.shadows.list {
		if sh.projection == projection {
			at = i
		}
	}
	if at < 0 {
		return swap.Info{}, fmt.Errorf("%w: add \"shadow\": {\"plugin\": FILE} to projection %q", ErrNoShadow, projection)
	}
	sh := h.shadows.list[at]
	var hs *hotSwap
	for _, s := range h.swaps {
		if s.projection == projection {
			hs = s
		}
	}
	if hs == nil {
		return swap.Info{}, fmt.Errorf("%w: add \"hotSwap\": {} (or watch / s3) to projection %q, or replace its plugin file and restart", ErrNotHotSwapped, projection)
	}
	if strings.HasPrefix(sh.plugin, "native:") {
		return swap.Info{}, fmt.Errorf("shadow plugin %s is native logic, not a module the hot-swap pipeline can load", sh.plugin)
	}
	wasm, err := os.ReadFile(sh.path)
	if err != nil {
		return swap.Info{}, fmt.Errorf("shadow plugin: %w", err)
	}
	info, _, err := hs.swapper.Offer(ctx, swap.Candidate{Wasm: wasm, Origin: sh.path})
	if err != nil {
		return info, fmt.Errorf("promoting %s: %w", sh.candidate, err)
	}
	h.shadows.list = append(h.shadows.list[:at:at], h.shadows.list[at+1:]...)
	h.log.Info("shadow plugin promoted: it serves the projection now", "projection", projection, "plugin", info.Plugin, "sha256", info.SHA256)
	return info, nil
}

// ShadowModule returns the path of a projection's shadow plugin (resolved
// against the configuration file's directory); false when it has none.
func (h *Host) ShadowModule(projection string) (string, bool) {
	for _, sh := range h.shadows.snapshot() {
		if sh.projection == projection {
			return sh.path, true
		}
	}
	return "", false
}
