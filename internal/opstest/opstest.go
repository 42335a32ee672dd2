// Package opstest builds what the operations tests share: a host running
// the test ledger over ddblocal, and stream records of appended events.
package opstest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// Fixture is a host on ddblocal with the ledger projection.
type Fixture struct {
	Env    *testenv.Env
	Host   *host.Host
	Cfg    *host.Config
	JSON   []byte // the configuration
	Events string // the event table
	Rows   string // the ledger's table
	Ledger *testlogic.Ledger
	seq    atomic.Int64
}

// Config is the configuration of a ledger projection over events into rows;
// extra is spliced into the top-level object (a leading comma included).
func Config(events, rows, extra string) []byte {
	return fmt.Appendf(nil, `{
	  "eventStore": {"table": %q, "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": %q,
	    "checkpoint": {"field": "version"}, "revision": {"field": "rev"}}]%s}`, events, testlogic.Stream, rows, extra)
}

// Start starts ddblocal and the host; extra is passed to Config.
func Start(t testing.TB, extra string, opts ...host.Option) *Fixture {
	t.Helper()
	return StartWith(t, nil, extra, opts...)
}

// StartWith is Start on a ddblocal whose options ddb sets (nil: the
// defaults), such as Streams.Shards for a test about one shard.
func StartWith(t testing.TB, ddb func(*ddblocal.Options), extra string, opts ...host.Option) *Fixture {
	t.Helper()
	var env *testenv.Env
	if ddb == nil {
		env = testenv.Start(t)
	} else {
		env = testenv.Start(t, ddb)
	}
	f := &Fixture{Env: env, Events: env.Table(t, "events", true), Rows: env.Table(t, "ledger", false), Ledger: &testlogic.Ledger{}}
	f.JSON = Config(f.Events, f.Rows, extra)
	cfg, err := host.ParseConfig(f.JSON)
	if err != nil {
		t.Fatal(err)
	}
	f.Cfg = cfg
	f.Host = f.NewHost(t, opts...)
	return f
}

// NewHost builds another host on the fixture's configuration.
func (f *Fixture) NewHost(t testing.TB, opts ...host.Option) *host.Host {
	t.Helper()
	return f.NewHostFor(t, f.Cfg, opts...)
}

// NewHostFor builds a host on cfg with the fixture's client and ledger.
func (f *Fixture) NewHostFor(t testing.TB, cfg *host.Config, opts ...host.Option) *host.Host {
	t.Helper()
	ctx := context.Background()
	base := []host.Option{host.WithNative("ledger", f.Ledger), host.WithClient(f.Env.Client),
		host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	h, err := host.New(ctx, cfg, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(ctx) })
	return h
}

// Append appends events of type typ with data n to stream instance id
// after version after, and returns their records.
func (f *Fixture) Append(t testing.TB, id string, after uint64, data ...abi.Item) []host.Record {
	t.Helper()
	var nes []host.NewEvent
	for _, d := range data {
		nes = append(nes, host.NewEvent{Type: d["_tag"].Str, Data: d})
	}
	evs, err := f.Host.Append(context.Background(), testlogic.Stream, id, after, nes...)
	if err != nil {
		t.Fatal(err)
	}
	return f.Records(evs...)
}

// Records returns the INSERT records of events, with sequence numbers
// increasing across the fixture's calls, as one shard's would.
func (f *Fixture) Records(evs ...abi.Event) []host.Record {
	recs := make([]host.Record, len(evs))
	for i, ev := range evs {
		seq := fmt.Sprintf("%021d", f.seq.Add(1))
		recs[i] = host.Record{EventName: host.EventInsert, EventID: ev.StreamID + "-" + seq, EventSource: "aws:dynamodb",
			DynamoDB: host.StreamRecord{NewImage: f.Host.EventItem(ev), SequenceNumber: seq, StreamViewType: "NEW_IMAGE"}}
	}
	return recs
}

// Add is an Add event's data.
func Add(n int) abi.Item { return abi.Item{"_tag": abi.S("Add"), "n": abi.N(fmt.Sprint(n))} }

// Fail is a Fail event's data: the ledger fails the row.
func Fail() abi.Item { return abi.Item{"_tag": abi.S("Fail")} }
