package apply_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// fixture is a ddblocal with an event store and a ledger read model.
type fixture struct {
	env    *testenv.Env
	db     *dynamo.DB // one client for the fixture, so request counts add up
	es     *eventstore.Store
	stream eventstore.Stream
	table  string
	logic  *testlogic.Ledger
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	env := testenv.Start(t)
	events := env.Table(t, "events", true)
	db := dynamo.New(env.Client)
	es, err := eventstore.New(db, events, eventstore.DefaultLayout("test", 1))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{env: env, db: db, es: es, table: env.Table(t, "ledger", false), logic: &testlogic.Ledger{},
		stream: eventstore.Stream{Name: testlogic.Stream, Composite: []string{"acctId"}}}
}

// reader adapts the event store to the engine's EventReader.
type reader struct{ f *fixture }

func (r reader) ReadFrom(ctx context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error) {
	return r.f.es.ReadFrom(ctx, r.f.stream, streamID, after, to)
}

func (f *fixture) engine(t testing.TB, mod func(*apply.Projection)) *apply.Engine {
	t.Helper()
	p := apply.Projection{
		Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"},
		Sources:    []apply.Source{{Name: testlogic.Stream, Stream: testlogic.Stream}},
		Checkpoint: apply.Checkpoint{Field: "version"}, CreatedAt: "createdAt",
		Logic: f.logic,
	}
	if mod != nil {
		mod(&p)
	}
	e, err := apply.New(p, f.db, reader{f})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// ev describes an event to append: "Add:5", "Skip", "Reject", "Fail", "Same",
// "Add:1@rowname", "Add:1@" (no row).
func (f *fixture) append(t testing.TB, streamID string, specs ...string) []abi.Event {
	t.Helper()
	ctx := context.Background()
	head, err := f.es.Head(ctx, f.stream, streamID)
	if err != nil {
		t.Fatal(err)
	}
	var nes []eventstore.NewEvent
	for _, s := range specs {
		nes = append(nes, newEvent(s))
	}
	evs, err := f.es.Append(ctx, f.stream, streamID, head, nes...)
	if err != nil {
		t.Fatalf("append to %s: %v", streamID, err)
	}
	return evs
}

func newEvent(spec string) eventstore.NewEvent {
	spec, row, hasRow := strings.Cut(spec, "@")
	tag, n, hasN := strings.Cut(spec, ":")
	data := abi.Item{}
	if hasN {
		data["n"] = abi.N(n)
	}
	switch {
	case hasRow && row == "":
		data["none"] = abi.Bool(true)
	case hasRow:
		data["row"] = abi.S(row)
	}
	return eventstore.NewEvent{Type: tag, Data: data}
}

func inputs(evs ...abi.Event) []apply.Input {
	out := make([]apply.Input, len(evs))
	for i, ev := range evs {
		out[i] = apply.Input{Event: ev, Pos: i}
	}
	return out
}

func (f *fixture) row(t testing.TB, name string) abi.Item {
	t.Helper()
	it, err := f.db.GetItem(context.Background(), f.table, testlogic.RowKey(name))
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func versions(evs []abi.Event) string {
	s := ""
	for i, ev := range evs {
		if i > 0 {
			s += ","
		}
		s += strconv.FormatUint(ev.Version, 10)
	}
	return s
}

func attr(it abi.Item, name string) string {
	v, ok := it[name]
	if !ok {
		return "<absent>"
	}
	return fmt.Sprint(v.Str)
}

func putOf(table string, it abi.Item) store.Put { return store.Put{Table: table, Item: it} }

func itoa(i int) string { return strconv.Itoa(i) }
