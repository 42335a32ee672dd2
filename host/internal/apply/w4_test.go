package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/testlogic"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// loopTimeout is the CallTimeout of the plugin that folds the looping row
// in TestW4_BadPluginsFailOnlyTheirRows: the test waits it out once.
const loopTimeout = 5 * time.Second

// misbehaveEngine loads testdata/misbehave as a Wasm plugin (the real
// runtime, its sandbox and limits) and returns an engine running it on the
// fixture's ddblocal, and the plugin. The module is loaded twice (see
// byLoop): with cfg, and with loopTimeout as CallTimeout for the rows whose
// run loops forever; loop is that second plugin.
func misbehaveEngine(t *testing.T, f *fixture, cfg plugin.Config) (e *apply.Engine, p, loop *plugin.Plugin) {
	t.Helper()
	wasm := wasmbuild.Build(t, "testdata/misbehave")
	load := func(cfg plugin.Config) *plugin.Plugin {
		p, err := plugin.Load(ctx, wasm, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, p.Close(context.Background())) })
		return p
	}
	p = load(cfg)
	loopCfg := cfg
	loopCfg.PoolSize, loopCfg.CallTimeout = 1, loopTimeout
	loop = load(loopCfg)
	e, err := apply.New(apply.Projection{
		Name: "w4", Table: f.table, KeyAttrs: []string{"pk", "sk"},
		Sources:    []apply.Source{{Name: testlogic.Stream, Stream: testlogic.Stream}},
		Checkpoint: apply.Checkpoint{Field: "version"},
		Logic:      byLoop{Logic: p, loop: loop}, Rows: 8,
	}, f.db, reader{f})
	require.NoError(t, err)
	return e, p, loop
}

// byLoop is the logic of the W4 engine: two plugins loaded from the same
// module, loop folding the runs with a Loop event and the embedded one
// everything else. With one CallTimeout for every row, the test raced the
// clock: the looping row waits the timeout out, so it must be short, while
// the hog row must reach its memory limit within it, which took from tens
// of milliseconds to seconds, and longer than 5 s when other packages'
// tests loaded both cores. Now the hog row is bounded by memory only (its
// plugin's CallTimeout is far longer) and the test waits out loopTimeout.
type byLoop struct {
	logic.Logic
	loop *plugin.Plugin
}

// Evolve folds req on loop when one of its events is a Loop.
func (b byLoop) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	for _, e := range req.Events {
		if e.Event.Type == "Loop" {
			return b.loop.Evolve(ctx, req)
		}
	}
	return b.Logic.Evolve(ctx, req)
}

// w4Row reads the row of stream instance id as the misbehave guest keys it.
func (f *fixture) w4Row(t *testing.T, id string) abi.Item {
	t.Helper()
	it, err := f.db.GetItem(ctx, f.table, abi.Item{"pk": abi.S("W4#" + id), "sk": abi.S("row")})
	require.NoError(t, err)
	return it
}

// outcomes indexes a result's rows by stream id.
func outcomes(t *testing.T, res apply.Result) map[string]apply.Outcome {
	t.Helper()
	require.Empty(t, res.KeyFailures)
	out := map[string]apply.Outcome{}
	for _, o := range res.Rows {
		out[strings.TrimPrefix(o.Key["pk"].Str, "W4#")] = o
	}
	return out
}

// TestW4_BadPluginsFailOnlyTheirRows runs one batch through the engine and a
// Wasm plugin in which one row's fold allocates without bound, one loops
// forever, one traps after folding part of its run and two read the clock,
// beside rows that fold normally. Each misbehaving row fails with an error
// naming the limit it hit and keeps what an earlier batch wrote; every other
// row is written; the clock reads the frozen epoch, the same for every row
// and instance; and the engine goes on serving the next batch. The looping
// row runs on a second load of the module with a short CallTimeout (see
// byLoop), so no row's outcome depends on how fast the machine is.
func TestW4_BadPluginsFailOnlyTheirRows(t *testing.T) {
	f := newFixture(t)
	// The hog row's memory limit, not a clock, ends its call: its growth to
	// 32 MiB takes from tens of milliseconds to seconds on a loaded machine;
	// a minute only bounds a hog that the limit failed to stop.
	e, p, loop := misbehaveEngine(t, f, plugin.Config{PoolSize: 4, MemoryLimitPages: 512, CallTimeout: time.Minute})

	// Batch 1: every row gets one normal event, so the failed rows have a
	// state that must survive their failure.
	rows := []string{"hog", "loop", "boom", "clock-1", "clock-2", "good-1", "good-2"}
	var first []abi.Event
	for _, id := range rows {
		first = append(first, f.append(t, id, "Placed")...)
	}
	for id, o := range outcomes(t, e.ApplyBatch(ctx, inputs(first...))) {
		require.NoError(t, o.Err, id)
	}
	before := map[string]abi.Item{}
	for _, id := range rows {
		before[id] = f.w4Row(t, id)
		require.Equal(t, "1", attr(before[id], "log"), id)
	}

	// Batch 2: the misbehaviours, interleaved with healthy rows.
	var second []abi.Event
	second = append(second, f.append(t, "hog", "Placed", "Hog", "Placed")...)
	second = append(second, f.append(t, "good-1", "Placed", "Placed")...)
	second = append(second, f.append(t, "loop", "Placed", "Loop")...)
	second = append(second, f.append(t, "boom", "Placed", "Placed", "Boom", "Placed")...)
	second = append(second, f.append(t, "clock-1", "Placed", "Clock:3600", "Placed")...)
	second = append(second, f.append(t, "clock-2", "Placed", "Clock:3600", "Placed")...)
	second = append(second, f.append(t, "good-2", "Placed")...)
	discarded := func() uint64 { return p.Stats().Discarded + loop.Stats().Discarded }
	discardedBefore := discarded()
	start := time.Now()
	res := outcomes(t, e.ApplyBatch(ctx, inputs(second...)))
	t.Logf("batch with misbehaving rows: %s, %+v, looping rows %+v", time.Since(start), p.Stats(), loop.Stats())
	require.Len(t, res, len(rows))

	failures := []struct {
		id        string
		kind      error
		fragments []string
	}{
		{"hog", plugin.ErrMemoryLimit, []string{"memory limit of 512 pages reached", "out of memory"}},
		{"loop", plugin.ErrTimeout, []string{"timeout after " + loopTimeout.String()}},
		{"boom", plugin.ErrTrap, []string{"trap: out of bounds memory access; wasm stack: "}},
	}
	for _, tt := range failures {
		t.Run(tt.id, func(t *testing.T) {
			o := res[tt.id]
			require.True(t, o.Failed(), "the row must fail")
			t.Logf("%s: %v", tt.id, o.Err)
			var re *apply.RowError
			require.ErrorAs(t, o.Err, &re, "a row's failure is a *apply.RowError")
			assert.Equal(t, "w4", re.Projection)
			var ce *logic.CallError
			require.ErrorAs(t, o.Err, &ce, "the plugin's failure is a *logic.CallError")
			assert.Equal(t, "misbehave@0.0.1", ce.Plugin)
			assert.Equal(t, abi.CapEvolve, ce.Function)
			assert.True(t, errors.Is(o.Err, tt.kind), "%v does not match %v", o.Err, tt.kind)
			for _, frag := range tt.fragments {
				assert.ErrorContains(t, o.Err, frag)
			}
			assert.False(t, o.Written)
			assert.Empty(t, o.Applied(), "a failed fold applies nothing, not even the events before the failure")
			require.NotEmpty(t, o.Instances)
			for _, in := range o.Instances {
				assert.Error(t, in.Err)
			}
			assert.Equal(t, before[tt.id], f.w4Row(t, tt.id), "the row keeps what batch 1 wrote")
		})
	}
	if d := discarded() - discardedBefore; d != uint64(len(failures)) {
		t.Errorf("%d instances discarded, want one per failed row (%d)", d, len(failures))
	}

	for _, id := range []string{"good-1", "good-2", "clock-1", "clock-2"} {
		o := res[id]
		require.NoError(t, o.Err, id)
		assert.True(t, o.Written, id)
	}
	assert.Equal(t, "1,2,3", attr(f.w4Row(t, "good-1"), "log"))
	assert.Equal(t, "1,2", attr(f.w4Row(t, "good-2"), "log"))

	// The clock: a guest that reads the wall clock and sleeps an hour does
	// not fail; it reads the frozen epoch, its sleep returns at once and
	// moves its virtual monotonic clock by exactly an hour, so two rows
	// with the same events are the same, whichever instances folded them.
	c1, c2 := f.w4Row(t, "clock-1"), f.w4Row(t, "clock-2")
	assert.Equal(t, "1970-01-01T00:00:00Z", attr(c1, "now"), "the guest's wall clock is frozen at the epoch")
	assert.Equal(t, "1h0m0s", attr(c1, "waited"), "the guest believes it slept exactly an hour")
	assert.Equal(t, "1,2,3,4", attr(c1, "log"))
	for _, it := range []abi.Item{c1, c2} {
		delete(it, "pk")
		delete(it, "createdAt")
	}
	assert.True(t, abi.ItemsEqual(c1, c2), "the same events fold to the same row:\n%v\n%v", c1, c2)

	// The host keeps serving: the failed rows fail the same way when their
	// records are redelivered, and the next batch of healthy events (for the
	// same rows too) is written.
	again := outcomes(t, e.ApplyBatch(ctx, inputs(second[:3]...)))
	require.True(t, errors.Is(again["hog"].Err, plugin.ErrMemoryLimit), "redelivery: %v", again["hog"].Err)

	var third []abi.Event
	third = append(third, f.append(t, "good-1", "Placed")...)
	third = append(third, f.append(t, "clock-1", "Placed")...)
	third = append(third, f.append(t, "fresh", "Placed", "Placed")...)
	for id, o := range outcomes(t, e.ApplyBatch(ctx, inputs(third...))) {
		require.NoError(t, o.Err, id)
		assert.True(t, o.Written, id)
	}
	assert.Equal(t, "1,2,3,4", attr(f.w4Row(t, "good-1"), "log"))
	assert.Equal(t, "1,2,3,4,5", attr(f.w4Row(t, "clock-1"), "log"))
	assert.Equal(t, "1,2", attr(f.w4Row(t, "fresh"), "log"))
	s := p.Stats()
	assert.LessOrEqual(t, s.Live, 4, "the pool never holds more than PoolSize instances")
	assert.Zero(t, s.Busy)
}
