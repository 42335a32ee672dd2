package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/outbox"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

var ctx = context.Background()

type fixture struct {
	env    *testenv.Env
	db     *dynamo.DB
	es     *eventstore.Store
	stream eventstore.Stream
	table  string
	fx     *testlogic.Effects
	drain  *outbox.Drainer
	now    time.Time
	mu     sync.Mutex
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// newFixture is a ddblocal with an event store and a ledger read model
// whose table has the outbox's sparse index; applied events carry n effects.
func newFixture(t testing.TB, n int) *fixture {
	t.Helper()
	env := testenv.Start(t)
	db := dynamo.New(env.Client)
	events := env.Table(t, "events", true)
	es, err := eventstore.New(db, events, eventstore.DefaultLayout("test", 1))
	require.NoError(t, err)
	table := "ledger_outbox"
	_, err = db.EnsureTable(ctx, dynamo.TableSpec{Name: table, KeyAttrs: []string{"pk", "sk"},
		Indexes: []dynamo.IndexSpec{{Name: "outbox", KeyAttrs: []string{apply.OutboxIndexPK, apply.OutboxIndexSK}}}})
	require.NoError(t, err)
	f := &fixture{env: env, db: db, es: es, table: table, fx: testlogic.WithEffects(&testlogic.Ledger{}, n),
		stream: eventstore.Stream{Name: testlogic.Stream, Composite: []string{"acctId"}}, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	e := f.engine(t, nil)
	l, ok := e.Projection().OutboxLayout()
	require.True(t, ok)
	f.drain = &outbox.Drainer{DB: db, Layout: l, Now: f.clock}
	return f
}

func (f *fixture) ReadFrom(ctx context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error) {
	return f.es.ReadFrom(ctx, f.stream, streamID, after, to)
}

func (f *fixture) engine(t testing.TB, drain func(ctx context.Context, key abi.Item) (int, int)) *apply.Engine {
	t.Helper()
	e, err := apply.New(apply.Projection{
		Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"}, Logic: f.fx,
		Sources:  []apply.Source{{Stream: testlogic.Stream}},
		Revision: &apply.Revision{Field: "rev"}, Checkpoint: apply.Checkpoint{Map: "checkpoints"},
		Outbox: &apply.Outbox{EntityType: "LedgerRow", Index: "outbox", Drain: drain},
	}, f.db, f)
	require.NoError(t, err)
	return e
}

// commit appends "Add:n" events to stream id and applies them (row = id).
func (f *fixture) commit(t *testing.T, e *apply.Engine, id string, ns ...int) apply.Outcome {
	t.Helper()
	head, err := f.es.Head(ctx, f.stream, id)
	require.NoError(t, err)
	var nes []eventstore.NewEvent
	for _, n := range ns {
		nes = append(nes, eventstore.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N(strconv.Itoa(n))}})
	}
	evs, err := f.es.Append(ctx, f.stream, id, head, nes...)
	require.NoError(t, err)
	var in []apply.Input
	for i, ev := range evs {
		in = append(in, apply.Input{Event: ev, Pos: i})
	}
	o := e.ApplyBatch(ctx, in).Rows[0]
	require.NoError(t, o.Err)
	return o
}

// recorder is a target recording what it accepts; fail, when set, decides
// whether a delivery fails.
type recorder struct {
	mu   sync.Mutex
	got  []string
	fail func(e deliver.Effect) error
}

func (r *recorder) Deliver(_ context.Context, e deliver.Effect) error {
	if r.fail != nil {
		if err := r.fail(e); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, name(e))
	return nil
}

func (r *recorder) delivered() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func name(e deliver.Effect) string {
	return fmt.Sprintf("%s/v%d.%d", e.StreamID, e.Version, e.Index)
}

func names(es []deliver.Effect) []string {
	var out []string
	for _, e := range es {
		out = append(out, name(e))
	}
	return out
}

func (f *fixture) pending(t *testing.T, row string) int {
	t.Helper()
	page, err := f.db.Query(ctx, store.Query{Table: f.table, KeyCond: "pk = :h AND begins_with(sk, :p)",
		Values: map[string]abi.Value{":h": abi.S("Ledger#" + row), ":p": abi.S("L#outbox#")}})
	require.NoError(t, err)
	return len(page.Items)
}

func TestO2_DrainDeliversInOrderAndDeletes(t *testing.T) {
	f := newFixture(t, 2)
	e := f.engine(t, nil)
	f.commit(t, e, "x", 1, 2)
	f.commit(t, e, "x", 3)
	r := &recorder{}

	rep, err := f.drain.Drain(ctx, testlogic.RowKey("x"), r)

	require.NoError(t, err)
	want := []string{"x/v1.0", "x/v1.1", "x/v2.0", "x/v2.1", "x/v3.0", "x/v3.1"}
	assert.Equal(t, want, r.delivered())
	assert.Equal(t, want, names(rep.Delivered))
	assert.Nil(t, rep.Undelivered)
	assert.Zero(t, f.pending(t, "x"), "delivered effects are deleted")
	d := rep.Delivered[2]
	assert.Equal(t, "ledger", d.Projection)
	assert.Equal(t, testlogic.Stream, d.Stream)
	assert.Equal(t, testlogic.RowKey("x"), d.Key)
	assert.Equal(t, testlogic.EffectOf(abi.Event{Stream: testlogic.Stream, StreamID: "x", Version: 2}, 0), d.Value)
}

func TestO2_AFailedDeliveryLeavesTheHeadAndReportsUndelivered(t *testing.T) {
	f := newFixture(t, 1)
	e := f.engine(t, nil)
	f.commit(t, e, "x", 1, 2, 3)
	boom := errors.New("consumer down")
	r := &recorder{fail: func(e deliver.Effect) error {
		if e.Version == 2 {
			return boom
		}
		return nil
	}}

	rep, err := f.drain.Drain(ctx, testlogic.RowKey("x"), r)

	require.NoError(t, err, "a failed delivery is no failure of the drain")
	assert.Equal(t, []string{"x/v1.0"}, r.delivered())
	require.NotNil(t, rep.Undelivered)
	assert.Equal(t, "x/v2.0", name(rep.Undelivered.Effect))
	assert.ErrorIs(t, rep.Undelivered.Err, boom)
	assert.Equal(t, 2, f.pending(t, "x"), "the failed effect stays at the head")

	// The claim was released: the next drain delivers at once, in order.
	r.fail = nil
	rep, err = f.drain.Drain(ctx, testlogic.RowKey("x"), r)
	require.NoError(t, err)
	assert.Equal(t, []string{"x/v2.0", "x/v3.0"}, names(rep.Delivered))
	assert.Zero(t, f.pending(t, "x"))
}

// A drainer that crashed holds a claim; another drainer waits for it to
// expire, then takes the effect over.
func TestO2_AnExpiredClaimIsTakenOver(t *testing.T) {
	f := newFixture(t, 1)
	e := f.engine(t, nil)
	f.commit(t, e, "x", 1, 2)
	crashed := &recorder{fail: func(deliver.Effect) error { panic("crash") }}
	func() {
		defer func() { _ = recover() }()
		_, _ = f.drain.Drain(ctx, testlogic.RowKey("x"), crashed)
	}()
	r := &recorder{}

	rep, err := f.drain.Drain(ctx, testlogic.RowKey("x"), r)
	require.NoError(t, err)
	assert.True(t, rep.Busy, "the crashed drainer's claim is live")
	assert.Empty(t, r.delivered())

	f.advance(outbox.DefaultClaimFor + time.Second)
	rep, err = f.drain.Drain(ctx, testlogic.RowKey("x"), r)
	require.NoError(t, err)
	assert.False(t, rep.Busy)
	assert.Equal(t, []string{"x/v1.0", "x/v2.0"}, r.delivered())
	assert.Zero(t, f.pending(t, "x"))
}

// A delivery that succeeds after its claim expired and another drainer took
// the effect over still deletes it.
func TestO2_ASuccessfulLateDeliveryDeletesAfterTakeover(t *testing.T) {
	f := newFixture(t, 1)
	e := f.engine(t, nil)
	f.commit(t, e, "x", 1, 2)
	taken := false
	r := &recorder{fail: func(ef deliver.Effect) error {
		if !taken {
			taken = true // meanwhile the claim expires and another drainer claims the head
			hash, prefix, err := f.drain.Layout.HeadPrefix(ef.Key)
			require.NoError(t, err)
			page, err := f.db.Query(ctx, store.Query{Table: f.table, KeyCond: "pk = :h AND begins_with(sk, :p)", Limit: 1,
				Values: map[string]abi.Value{":h": hash, ":p": abi.S(prefix)}})
			require.NoError(t, err)
			_, err = f.db.UpdateItem(ctx, store.Update{Table: f.table, Key: abi.Item{"pk": page.Items[0]["pk"], "sk": page.Items[0]["sk"]},
				Expr: "SET #o = :o, #u = :u", Names: map[string]string{"#o": apply.OutboxAttrOwner, "#u": apply.OutboxAttrUntil},
				Values: map[string]abi.Value{":o": abi.S("other"), ":u": abi.N(strconv.FormatInt(f.clock().Add(time.Hour).UnixMilli(), 10))}})
			require.NoError(t, err)
		}
		return nil
	}}

	rep, err := f.drain.Drain(ctx, testlogic.RowKey("x"), r)

	require.NoError(t, err)
	assert.Equal(t, []string{"x/v1.0", "x/v2.0"}, names(rep.Delivered), "the late delivery deleted v1 and the drain went on")
	assert.Zero(t, f.pending(t, "x"))
}

func TestO3_ApplyBatchDeliversRightAfterTheWrite(t *testing.T) {
	f := newFixture(t, 1)
	r := &recorder{}
	drain := func(ctx context.Context, key abi.Item) (int, int) {
		rep, err := f.drain.Drain(ctx, key, r)
		require.NoError(t, err)
		u := 0
		if rep.Undelivered != nil {
			u = 1
		}
		return len(rep.Delivered), u
	}
	e := f.engine(t, drain)

	o := f.commit(t, e, "x", 1, 2)
	assert.Equal(t, 2, o.Enqueued)
	assert.Equal(t, 2, o.Delivered)
	assert.Equal(t, []string{"x/v1.0", "x/v2.0"}, r.delivered())
	assert.Zero(t, f.pending(t, "x"))

	r.fail = func(deliver.Effect) error { return errors.New("down") }
	o = f.commit(t, e, "x", 3)
	assert.NoError(t, o.Err, "an undelivered effect never fails the row")
	assert.Equal(t, 1, o.Enqueued)
	assert.Equal(t, 1, o.Undelivered)
	assert.Equal(t, 1, f.pending(t, "x"))
}

// A crash between the write and the delivery leaves effects pending; a
// sweep through the sparse index delivers them, though the rows get no
// more events.
func TestO5_DrainPendingDeliversRowsThatGetNoMoreEvents(t *testing.T) {
	f := newFixture(t, 2)
	e := f.engine(t, nil) // no delivery on write: as if the process stopped after it
	f.commit(t, e, "x", 1, 2)
	f.commit(t, e, "y", 5)
	f.fx.SetCount(0)
	f.commit(t, e, "z", 7) // no effects: z is not pending
	r := &recorder{}

	rows, err := f.drain.Pending(ctx)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	reps, err := f.drain.DrainPending(ctx, r)

	require.NoError(t, err)
	require.Len(t, reps, 2)
	var got []string
	for _, rep := range reps {
		got = append(got, names(rep.Delivered)...)
	}
	assert.ElementsMatch(t, []string{"x/v1.0", "x/v1.1", "x/v2.0", "x/v2.1", "y/v1.0", "y/v1.1"}, got)
	for _, rep := range reps {
		for i := 1; i < len(rep.Delivered); i++ {
			assert.Less(t, name(rep.Delivered[i-1]), name(rep.Delivered[i]), "per row in commit order")
		}
	}
	rows, err = f.drain.Pending(ctx)
	require.NoError(t, err)
	assert.Empty(t, rows)
}

func TestO5_DrainPendingNeedsTheIndex(t *testing.T) {
	f := newFixture(t, 1)
	d := *f.drain
	d.Layout.Index = ""
	_, err := d.DrainPending(ctx, &recorder{})
	assert.ErrorIs(t, err, outbox.ErrNoIndex)
}
