package swap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
)

// Defaults applied to zero fields of Config.
const (
	// DefaultHistory is the number of accepted versions kept for Rollback,
	// the current one included.
	DefaultHistory = 5
	// DefaultCloseTimeout bounds the closing of a drained version.
	DefaultCloseTimeout = 30 * time.Second
)

// ErrClosed is returned by calls on a closed Swapper.
var ErrClosed = errors.New("swap: closed")

// ErrNoHistory is returned by Rollback when no earlier version is kept.
var ErrNoHistory = errors.New("swap: no earlier version to roll back to")

// ErrSuperseded is returned by Offer or Rollback when another version was
// swapped in while its candidate went through the pipeline: the candidate,
// validated against a version no longer current, is not swapped in.
var ErrSuperseded = errors.New("swap: another version was swapped in meanwhile")

// Config configures a Swapper. It is passed by value and never changed.
type Config struct {
	// Plugin is how every version is loaded (pool size, limits, cache
	// directory). Its Logger defaults to Logger.
	Plugin plugin.Config
	// Expect is what every version must describe. Zero: what the first
	// version describes (see ExpectOf).
	Expect Expect
	// Pins, when not empty, lists the hex SHA-256 digests of the modules
	// that may be loaded; any other module is refused (ErrPinMismatch).
	Pins []string
	// Fixture is the smoke test of a version that has no self_test export;
	// nil: such a version is only validated.
	Fixture *Fixture
	// FixtureFiles, when set, are read again for every candidate (over
	// Fixture), so a fixture updated beside a new module tests that module
	// without a restart.
	FixtureFiles *FixtureFiles
	// WrittenBy, when set, names the attribute in which Evolve records
	// "name@version" of the version that computed the item.
	WrittenBy string
	// History is the number of accepted versions kept for Rollback
	// (default DefaultHistory, at least 2).
	History int
	// CloseTimeout bounds the closing of a version once drained (default
	// DefaultCloseTimeout).
	CloseTimeout time.Duration
	// Archive, when set, is a directory where every accepted module is
	// saved, so RollbackDir can put an earlier one back.
	Archive string
	// Logger receives swaps and refused candidates. Nil discards them.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.History < 2 {
		c.History = DefaultHistory
	}
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = DefaultCloseTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Plugin.Logger == nil {
		c.Plugin.Logger = c.Logger
	}
	return c
}

// Info identifies a version of a plugin.
type Info struct {
	Name    string    // the plugin's name, as describe says
	Version string    // the plugin's version, as describe says
	Plugin  string    // "name@version", as rows record it
	SHA256  string    // hex SHA-256 of the module
	Origin  string    // where the module came from (a path, an s3:// URL)
	Since   time.Time // when it was swapped in
}

// Stats are the Swapper's counters.
type Stats struct {
	Swaps     uint64            // versions swapped in (rollbacks included), the first one excluded
	Rollbacks uint64            // swaps back to a version accepted before: Rollback, or an offered module that is one (host plugin rollback)
	Failed    uint64            // candidates refused by the pipeline
	FailedBy  map[string]uint64 // refusals by step (StepPin, StepLoad, StepCompat, StepSmoke)
	Unchanged uint64            // candidates identical to the current version, ignored
	Retired   uint64            // old versions closed after their calls drained
}

// Swapper is a logic.Logic whose plugin can be replaced while it serves
// calls. It is safe for concurrent use.
type Swapper struct {
	cfg    Config
	expect Expect
	cur    atomic.Pointer[version]

	// mu guards the fields below and the swap itself; it is never held
	// while a candidate goes through the pipeline (loading a module can
	// take as long as its call timeout), so calls, Rollback, History and
	// Close never wait for a candidate.
	mu sync.Mutex
	// offerMu serializes Offers, rollMu Rollbacks; each is held through
	// the pipeline.
	offerMu, rollMu sync.Mutex
	// life ends when Close is called: it ends the pipeline of a candidate
	// being validated.
	life    context.Context
	stop    context.CancelFunc
	history []*accepted
	closed  bool
	last    abi.Description // Describe after Close
	retired sync.WaitGroup  // old versions still closing

	swaps, rollbacks, failed, unchanged, closedN atomic.Uint64
	failedBy                                     sync.Map // step -> *atomic.Uint64
	hist                                         history  // the last events, for status pages
}

// refused counts a refused candidate, by step.
func (s *Swapper) refused(err error) {
	step := StepUnknown
	var ce *CandidateError
	if errors.As(err, &ce) {
		step = ce.Step
	}
	n, _ := s.failedBy.LoadOrStore(step, new(atomic.Uint64))
	n.(*atomic.Uint64).Add(1)
	s.failed.Add(1)
	s.hist.add(refusal(err))
}

var _ logic.Logic = (*Swapper)(nil)

// accepted is a module that passed the pipeline, kept for Rollback.
type accepted struct {
	cand Candidate
	info Info
}

// version is one loaded version with its reference count: one reference
// for being current plus one per call in flight. It is closed when the count
// reaches zero, and never acquired again after that.
type version struct {
	l    logic.Logic
	desc abi.Description
	info Info
	refs atomic.Int64
	done chan struct{} // closed once l is closed
	// atClose marks the version serving when the Swapper closed: its
	// retirement is the end of the process's use, not a swap's.
	atClose atomic.Bool
}

func (v *version) acquire() bool {
	for {
		n := v.refs.Load()
		if n <= 0 {
			return false
		}
		if v.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// New loads the first version through the pipeline (pins, load, smoke
// test) and returns a Swapper serving it. Without cfg.Expect, what this
// version describes becomes what every later version must describe.
func New(ctx context.Context, first Candidate, cfg Config) (*Swapper, error) {
	s := &Swapper{cfg: cfg.withDefaults(), expect: cfg.Expect}
	s.life, s.stop = context.WithCancel(context.Background())
	v, err := s.prepare(ctx, first, s.expect.IsZero())
	if err != nil {
		s.stop()
		s.refused(err)
		return nil, err
	}
	if s.expect.IsZero() {
		sc := s.expect.StreamComposites
		s.expect = ExpectOf(v.desc)
		s.expect.StreamComposites = sc
	}
	s.install(v, first, false)
	return s, nil
}

// Describe returns what the current version describes.
func (s *Swapper) Describe() abi.Description {
	if v := s.cur.Load(); v != nil {
		return v.desc
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Current returns the current version.
func (s *Swapper) Current() Info {
	if v := s.cur.Load(); v != nil {
		return v.info
	}
	return Info{}
}

// Expect returns what every version must describe.
func (s *Swapper) Expect() Expect { return s.expect }

// Key calls the current version's key.
func (s *Swapper) Key(ctx context.Context, req *abi.KeyRequest) (*abi.KeyResponse, error) {
	v, err := s.acquire(abi.CapKey)
	if err != nil {
		return nil, err
	}
	defer s.release(v)
	return v.l.Key(ctx, req)
}

// Evolve calls the current version's evolve. With Config.WrittenBy set, the
// returned item records the version that computed it.
func (s *Swapper) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	resp, _, err := s.EvolveAttributed(ctx, req)
	return resp, err
}

// EvolveAttributed is Evolve that also returns "name@version" of the version
// that served the call, for an engine that records provenance per write.
func (s *Swapper) EvolveAttributed(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, string, error) {
	v, err := s.acquire(abi.CapEvolve)
	if err != nil {
		return nil, "", err
	}
	defer s.release(v)
	resp, err := v.l.Evolve(ctx, req)
	if err != nil {
		return nil, v.info.Plugin, err
	}
	if s.cfg.WrittenBy != "" && resp.Item != nil {
		resp.Item[s.cfg.WrittenBy] = abi.S(v.info.Plugin)
	}
	return resp, v.info.Plugin, nil
}

// acquire takes a reference on the current version. A version retired
// between the load and the increment has already been replaced, so the loop
// ends on the next load.
func (s *Swapper) acquire(fn string) (*version, error) {
	for {
		v := s.cur.Load()
		if v == nil {
			return nil, &logic.CallError{Plugin: s.expect.Name, Function: fn, Cause: ErrClosed}
		}
		if v.acquire() {
			return v, nil
		}
	}
}

// release drops a reference; the last one closes the version.
func (s *Swapper) release(v *version) {
	if v.refs.Add(-1) == 0 {
		go s.closeVersion(v)
	}
}

func (s *Swapper) closeVersion(v *version) {
	defer s.retired.Done()
	defer close(v.done)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.CloseTimeout)
	defer cancel()
	if err := v.l.Close(ctx); err != nil {
		s.cfg.Logger.Warn("closing a retired plugin version", "plugin", v.info.Plugin, "err", err)
	}
	s.closedN.Add(1)
	// a version replaced by a swap is news; the one serving at Close is not
	level := slog.LevelInfo
	if v.atClose.Load() {
		level = slog.LevelDebug
	}
	s.cfg.Logger.Log(context.Background(), level, "plugin version retired", "plugin", v.info.Plugin, "sha256", short(v.info.SHA256))
}

// install makes v current and retires the previous version. s.mu is held
// (or s is not shared yet).
func (s *Swapper) install(v *version, c Candidate, rollback bool) *version {
	v.info.Since = time.Now()
	v.refs.Store(1)
	v.done = make(chan struct{})
	s.retired.Add(1)
	if s.cur.Load() != nil {
		s.swaps.Add(1) // counted before the new version can be seen
	}
	old := s.cur.Swap(v)
	s.hist.add(installed(v.info, old != nil, rollback))
	if !rollback {
		s.archive(c, v.info)
		s.history = append(s.history, &accepted{cand: c, info: v.info})
		if len(s.history) > s.cfg.History {
			s.history = append(s.history[:0:0], s.history[len(s.history)-s.cfg.History:]...)
		}
	}
	if old != nil {
		msg := "plugin swapped"
		if rollback {
			msg = "plugin rolled back" // to a version accepted before
		}
		s.cfg.Logger.Info(msg, "from", old.info.Plugin, "to", v.info.Plugin,
			"sha256", short(v.info.SHA256), "origin", v.info.Origin, "rollback", rollback)
		s.release(old)
	}
	return old
}

// acceptedBefore returns where in the history a module accepted before the
// current one sits (-1: kept only in the archive; ok false: not accepted
// before the current one): a module offered again is a rollback to it,
// whoever put it back (Rollback, or `host plugin rollback` writing it where
// the host watches). A module in the archive is a rollback only when it was
// first accepted before the current one: hosts sharing the archive archive
// an upgrade as soon as each accepts it, so the others find it there and
// must still count it as an upgrade. s.mu is held.
func (s *Swapper) acceptedBefore(sha string) (at int, ok bool) {
	for i := len(s.history) - 2; i >= 0; i-- {
		if s.history[i].info.SHA256 == sha {
			return i, true
		}
	}
	if s.cfg.Archive == "" {
		return 0, false
	}
	then, archived := firstAccepted(s.cfg.Archive, sha)
	if !archived {
		return 0, false
	}
	cur := s.cur.Load().info
	since := cur.Since
	if t, ok := firstAccepted(s.cfg.Archive, cur.SHA256); ok && t.Before(since) {
		since = t
	}
	if then.Before(since) {
		return -1, true
	}
	return 0, false
}

// Offer runs a candidate through the pipeline and, when it passes, swaps it
// in: calls in flight finish on the old version, new calls use the new one.
// A candidate identical to the current version is ignored (changed false).
// A refused candidate leaves the current version serving; the error is a
// *CandidateError. The pipeline runs without the lock calls, Rollback and
// Close need: a Rollback that swaps a version in meanwhile wins (the
// candidate is closed and Offer answers ErrSuperseded), and Close ends the
// pipeline (ErrClosed). Offers are serialized.
func (s *Swapper) Offer(ctx context.Context, c Candidate) (info Info, changed bool, err error) {
	s.offerMu.Lock()
	defer s.offerMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Info{}, false, ErrClosed
	}
	cur := s.cur.Load()
	if c.SHA256() == cur.info.SHA256 {
		s.unchanged.Add(1)
		s.mu.Unlock()
		return cur.info, false, nil
	}
	s.mu.Unlock()

	v, err := s.prepareUntilClose(ctx, c, false)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.discard(ctx, v)
		return Info{}, false, ErrClosed
	}
	if err != nil {
		s.refused(err)
		s.cfg.Logger.Error("plugin candidate refused; the current version keeps serving",
			"current", s.cur.Load().info.Plugin, "origin", c.Origin, "err", err)
		return s.cur.Load().info, false, err
	}
	if now := s.cur.Load(); now != cur {
		s.discard(ctx, v)
		s.cfg.Logger.Warn("plugin candidate not swapped in: another version was swapped in while it was validated",
			"candidate", v.info.Plugin, "origin", c.Origin, "serving", now.info.Plugin)
		return now.info, false, fmt.Errorf("%s from %s: %w (%s)", v.info.Plugin, c.Origin, ErrSuperseded, now.info.Plugin)
	}
	if at, back := s.acceptedBefore(c.SHA256()); back {
		// A version accepted before, put back: a rollback, counted and
		// logged as one. The versions after it are forgotten, as Rollback
		// forgets the one it leaves; one known only from the archive
		// takes the place of the one it replaces.
		if at >= 0 {
			s.history = s.history[:at+1]
		} else {
			s.history = append(s.history[:len(s.history)-1], &accepted{cand: c, info: v.info})
		}
		s.rollbacks.Add(1)
		s.install(v, c, true)
		s.archive(c, v.info) // newest again
		return v.info, true, nil
	}
	s.install(v, c, false)
	return v.info, true, nil
}

// Rollback swaps the previous accepted version back in (through the
// pipeline again) and forgets the current one, so a second Rollback goes
// one further back. It returns the version now serving. Like Offer, it
// loads the previous version without the lock calls and Close need; an
// Offer that swaps a version in meanwhile wins (ErrSuperseded).
func (s *Swapper) Rollback(ctx context.Context) (Info, error) {
	s.rollMu.Lock()
	defer s.rollMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Info{}, ErrClosed
	}
	cur := s.cur.Load()
	if len(s.history) < 2 {
		s.mu.Unlock()
		return cur.info, ErrNoHistory
	}
	prev := s.history[len(s.history)-2]
	s.mu.Unlock()

	v, err := s.prepareUntilClose(ctx, prev.cand, false)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.discard(ctx, v)
		return Info{}, ErrClosed
	}
	if err != nil {
		s.refused(err)
		return s.cur.Load().info, fmt.Errorf("rollback to %s: %w", prev.info.Plugin, err)
	}
	if now := s.cur.Load(); now != cur {
		s.discard(ctx, v)
		return now.info, fmt.Errorf("rollback to %s: %w (%s); roll back again to go back from it", prev.info.Plugin, ErrSuperseded, now.info.Plugin)
	}
	s.history = s.history[:len(s.history)-1]
	s.rollbacks.Add(1)
	s.install(v, prev.cand, true)
	return v.info, nil
}

// prepareUntilClose is prepare with a context that also ends when Close is
// called.
func (s *Swapper) prepareUntilClose(ctx context.Context, c Candidate, skipCompat bool) (*version, error) {
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(s.life, func() { cancel(ErrClosed) })
	defer stop()
	return s.prepare(pctx, c, skipCompat)
}

// discard closes a prepared version that is not swapped in (nil: none).
func (s *Swapper) discard(ctx context.Context, v *version) {
	if v == nil {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.CloseTimeout)
	defer cancel()
	if err := v.l.Close(cctx); err != nil {
		s.cfg.Logger.Warn("closing a plugin candidate that was not swapped in", "plugin", v.info.Plugin, "err", err)
	}
}

// History returns the accepted versions kept for Rollback, oldest first;
// the last one is current.
func (s *Swapper) History() []Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Info, len(s.history))
	for i, a := range s.history {
		out[i] = a.info
	}
	return out
}

// Stats returns the Swapper's counters.
func (s *Swapper) Stats() Stats {
	st := Stats{Swaps: s.swaps.Load(), Rollbacks: s.rollbacks.Load(), Failed: s.failed.Load(),
		Unchanged: s.unchanged.Load(), Retired: s.closedN.Load(), FailedBy: map[string]uint64{}}
	s.failedBy.Range(func(k, v any) bool {
		st.FailedBy[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return st
}

// Close refuses new calls, ends the pipeline of a candidate being
// validated (its Offer or Rollback answers ErrClosed), waits (until ctx
// ends) for the calls in flight and closes every version. It never waits
// for a candidate, and the calls in flight end within the plugin's call
// timeout, so Close returns within that timeout plus the time to close the
// versions' instances, whatever ctx.
func (s *Swapper) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.stop()
	v := s.cur.Load()
	s.last = v.desc
	v.atClose.Store(true)
	s.cur.Store(nil)
	s.mu.Unlock()
	s.release(v)
	done := make(chan struct{})
	go func() { s.retired.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("swap: closing: %w", ctx.Err())
	}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
