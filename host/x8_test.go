package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/internal/opstest"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// sleepClock is a clock that only moves when the code under test sleeps on
// it: a sleep of d advances it by d at once.
type sleepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *sleepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *sleepClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *sleepClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.advance(d)
	return nil
}

// twoLedgers is a fixture whose feed has two projections of the ledger:
// "ledger" as configured by edit, and "free", unlimited.
func twoLedgers(t *testing.T, edit func(*host.ProjectionConfig), opts ...host.Option) (*opstest.Fixture, *host.Host) {
	t.Helper()
	f := opstest.Start(t, "")
	cfg := *f.Cfg
	limited := f.Cfg.Projections[0]
	edit(&limited)
	free := f.Cfg.Projections[0]
	free.Name, free.Table = "free", f.Env.Table(t, "free", false)
	cfg.Projections = []host.ProjectionConfig{limited, free}
	return f, f.NewHostFor(t, &cfg, opts...)
}

// A projection limited to N events per second, with a burst of B, never
// has more than N·t + B events applied t seconds after it started, by the
// clock the limiter sleeps on; it keeps up with that bound (it is a limit,
// not a stall); and the other projection of the same feed applies every
// batch at once, never waiting.
func TestX8_ARateLimitedProjectionAppliesAtMostNtPlusBurst(t *testing.T) {
	ctx := context.Background()
	const n, burst = 50.0, 10
	clk := &sleepClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	t0 := clk.now()
	f, h := twoLedgers(t, func(p *host.ProjectionConfig) {
		p.RateLimit = &host.RateLimitConfig{EventsPerSecond: n, Burst: burst}
	}, host.WithClock(clk.now), host.WithRateLimitClock(clk.now, clk.sleep))

	var commits []time.Time // the commit time of every event the limited projection applied
	applied, freeApplied, total := 0, 0, 0
	var waited time.Duration
	for b := 0; b < 12; b++ {
		var recs []host.Record
		for i := 0; i < 4+b%3*6; i++ { // 4, 10 or 16 events over several rows
			evs, err := h.Append(ctx, testlogic.Stream, fmt.Sprintf("r%d-%d", b, i%4), uint64(i/4), host.NewEvent{Type: "Add", Data: opstest.Add(1)})
			require.NoError(t, err)
			recs = append(recs, f.Records(evs...)...)
		}
		total += len(recs)
		res, err := h.ProcessBatch(ctx, recs)
		require.NoError(t, err)
		require.Empty(t, res.Failed())
		lim, free := res.Projections["ledger"], res.Projections["free"]
		assert.Zero(t, free.RateWait, "the unlimited projection never waits")
		waited += lim.RateWait
		for _, row := range lim.Rows {
			for range row.Applied() {
				commits = append(commits, row.Committed)
			}
			applied += len(row.Applied())
		}
		for _, row := range free.Rows {
			freeApplied += len(row.Applied())
		}
		assert.Equal(t, total, freeApplied, "the free projection applied every batch at once")
	}
	require.Equal(t, total, applied)
	sort.Slice(commits, func(i, j int) bool { return commits[i].Before(commits[j]) })
	for i, at := range commits {
		elapsed := at.Sub(t0).Seconds()
		assert.LessOrEqual(t, float64(i+1), n*elapsed+burst+1e-9, "event %d applied %.3fs after the start: more than N·t + burst", i+1, elapsed)
	}
	elapsed := clk.now().Sub(t0)
	assert.Equal(t, elapsed, waited, "the time waited is reported")
	assert.InDelta(t, float64(total-burst)/n, elapsed.Seconds(), 1e-6, "the limiter waits no longer than the rate requires")
}

// A delivery target that fails opens its breaker after the configured
// failures in a row: the effects of the rows written while it is open stay
// pending, in order, without a call to the target and without a record
// failing. Once the target is back and the cooldown over, a drain's first
// delivery probes it, the breaker closes, and drain-pending delivers every
// effect exactly once, each row's in order; the transitions are counted.
func TestX8_AWebhookFailingThenRecoveringOpensThenClosesTheBreaker(t *testing.T) {
	ctx := context.Background()
	sink := &webhookSink{down: true}
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		sink.ServeHTTP(w, r)
	}))
	defer srv.Close()
	clk := &sleepClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	env := testenv.Start(t)
	events := env.Table(t, "events", true)
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": "ledger_rows",
	    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "rev"}, "readModel": {"entityType": "LedgerRow"},
	    "outbox": {"index": "pending", "deliver": {"webhook": {"url": %q}, "maxInFlight": 2,
	      "breaker": {"failures": 3, "cooldown": "1m"}}}}]}`, events, testlogic.Stream, srv.URL))
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithNative("ledger", testlogic.WithEffects(&testlogic.Ledger{}, 2)), host.WithClient(env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), host.WithClock(clk.now))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	_, err = h.CreateTables(ctx)
	require.NoError(t, err)
	state := func() deliver.BreakerStats {
		bs := h.Breakers()
		require.Len(t, bs, 1)
		assert.Equal(t, "webhook "+srv.URL, bs[0].Target)
		return bs[0].BreakerStats
	}

	versions := map[string]uint64{}
	write := func(rows ...string) {
		for _, row := range rows {
			evs, err := h.Append(ctx, testlogic.Stream, row, versions[row], add(1))
			require.NoError(t, err)
			versions[row]++
			res, err := h.ProcessBatch(ctx, records(h, evs))
			require.NoError(t, err)
			assert.Empty(t, res.Failed(), "an undelivered effect never fails its record")
			assert.Equal(t, 1, res.Projections["ledger"].Rows[0].Undelivered)
		}
	}
	write("a", "b", "c") // three failures in a row: open
	assert.Equal(t, int64(3), calls.Load())
	st := state()
	assert.Equal(t, deliver.BreakerOpen, st.State)
	assert.Equal(t, int64(1), st.Opened)

	write("d", "a", "b") // refused while open: no call
	assert.Equal(t, int64(3), calls.Load(), "an open breaker does not call the target")
	assert.Positive(t, state().Refused)

	sink.mu.Lock()
	sink.down = false
	sink.mu.Unlock()
	reps, err := h.DrainPending(ctx, "ledger", nil)
	require.NoError(t, err)
	for _, r := range reps {
		assert.Empty(t, r.Delivered, "before the cooldown nothing goes out")
	}
	assert.Equal(t, int64(3), calls.Load())

	clk.advance(61 * time.Second)
	for i := 0; i < 3 && len(sink.versions()) < 2*6; i++ {
		_, err := h.DrainPending(ctx, "ledger", nil) // the first delivery probes; the others follow once it closed
		require.NoError(t, err)
	}
	st = state()
	assert.Equal(t, deliver.BreakerClosed, st.State)
	assert.Equal(t, []int64{1, 1, 1}, []int64{st.Opened, st.HalfOpened, st.Closed})

	byRow := map[string][]string{}
	for _, v := range sink.versions() {
		row, rest, _ := strings.Cut(v, "/")
		byRow[row] = append(byRow[row], rest)
	}
	assert.Equal(t, map[string][]string{
		"a": {"v1.0", "v1.1", "v2.0", "v2.1"}, "b": {"v1.0", "v1.1", "v2.0", "v2.1"},
		"c": {"v1.0", "v1.1"}, "d": {"v1.0", "v1.1"},
	}, byRow, "every effect delivered once, each row's in order")
	keys := slices.Clone(sink.keys)
	slices.Sort(keys)
	assert.Len(t, slices.Compact(keys), 12, "no effect delivered twice")
}

// A paused projection applies nothing and hands back the events it was
// given, while the other projection of the feed applies them; once resumed
// and caught up from the event store, its rows equal the other's.
func TestX8_APausedProjectionDefersItsEventsWhileTheOtherGoesOn(t *testing.T) {
	ctx := context.Background()
	f, h := twoLedgers(t, func(*host.ProjectionConfig) {})
	require.NoError(t, h.Pause("ledger"))
	assert.Equal(t, []string{"ledger"}, h.Paused())
	evs, err := h.Append(ctx, testlogic.Stream, "a", 0, host.NewEvent{Type: "Add", Data: opstest.Add(2)}, host.NewEvent{Type: "Add", Data: opstest.Add(3)})
	require.NoError(t, err)
	res, err := h.ProcessBatch(ctx, f.Records(evs...))
	require.NoError(t, err)
	require.Empty(t, res.Failed())
	paused := res.Projections["ledger"]
	assert.True(t, paused.Paused)
	assert.Empty(t, paused.Rows)
	assert.Len(t, paused.Deferred, 2)
	assert.Len(t, res.Projections["free"].Rows, 1)
	_, ok, err := h.Row(ctx, "ledger", testlogic.RowKey("a"))
	require.NoError(t, err)
	assert.False(t, ok, "nothing written while paused")

	require.NoError(t, h.Resume("ledger"))
	assert.Empty(t, h.Paused())
	_, err = h.CatchUpRow(ctx, "ledger", testlogic.RowKey("a"), host.InstanceRef{Source: testlogic.Stream, StreamID: "a"})
	require.NoError(t, err)
	got, ok, err := h.Row(ctx, "ledger", testlogic.RowKey("a"))
	require.NoError(t, err)
	require.True(t, ok)
	want, _, err := h.Row(ctx, "free", testlogic.RowKey("a"))
	require.NoError(t, err)
	assert.Equal(t, want["total"], got["total"])
	assert.ErrorIs(t, h.Pause("nope"), host.ErrUnknownProjection)
}

// tableTags lists a table's tags through the SDK.
func tableTags(t *testing.T, env *testenv.Env, table string) map[string]string {
	t.Helper()
	ctx := context.Background()
	d, err := env.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	require.NoError(t, err)
	out, err := env.Client.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: d.Table.TableArn})
	require.NoError(t, err)
	m := map[string]string{}
	for _, tg := range out.Tags {
		m[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	return m
}

// `host tables create` labels every read-model table as derived state,
// naming the projections that write it (two share one here, one keeps its
// outbox in it), and leaves the event table, the source of truth, and the
// lease table unlabelled; run again it adds nothing, and a read-model
// table that existed untagged gets the labels.
func TestX8_TablesCreateTagsReadModelsAsDerivedState(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	existing := env.Table(t, "existing", false) // made before, without tags
	cfg, err := host.ParseConfig(fmt.Appendf(nil, `{
	  "eventStore": {"table": "events-x8", "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [
	    {"name": "ledger", "plugin": "native:ledger", "table": "rows-x8", "checkpoint": {"map": "cp"}, "revision": {"field": "rev"},
	     "outbox": {"index": "pending"}},
	    {"name": "mirror", "plugin": "native:ledger", "table": "rows-x8", "checkpoint": {"field": "mv"}},
	    {"name": "old", "plugin": "native:ledger", "table": %q, "checkpoint": {"field": "v"}}],
	  "sidecar": {"leaseTable": "leases-x8"}}`, testlogic.Stream, existing))
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly(), host.WithClient(env.Client))
	require.NoError(t, err)
	defer h.Close(ctx)
	reps, err := h.CreateTables(ctx)
	require.NoError(t, err)
	tagged := map[string][]string{}
	for _, r := range reps {
		tagged[r.Table] = r.Tagged
	}
	assert.Equal(t, []string{host.TagDerived, host.TagOutbox, host.TagProjection}, tagged["rows-x8"])
	assert.Equal(t, []string{host.TagDerived, host.TagProjection}, tagged[existing], "an existing read-model table gets the labels")
	assert.Empty(t, tagged["events-x8"])
	assert.Empty(t, tagged["leases-x8"])

	assert.Equal(t, map[string]string{host.TagDerived: "true", host.TagProjection: "ledger mirror", host.TagOutbox: "pending-effects"}, tableTags(t, env, "rows-x8"))
	assert.Equal(t, map[string]string{host.TagDerived: "true", host.TagProjection: "old"}, tableTags(t, env, existing))
	assert.Empty(t, tableTags(t, env, "events-x8"), "the event table is the source of truth")
	assert.Empty(t, tableTags(t, env, "leases-x8"))

	again, err := h.CreateTables(ctx)
	require.NoError(t, err)
	for _, r := range again {
		assert.Empty(t, r.Tagged, "run again, %s gets no tag", r.Table)
	}
}
