package host_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// TestW8_TheIssuesBadNumberIsRefusedBeforeTheWrite is the issue's case 3 as
// it was met: a Wasm plugin whose to_item returns qty = {"N":
// "not-a-number"} folds an order. The row fails before any write, with a
// typed error naming the projection, the plugin version, the event and the
// attribute; nothing is sent to DynamoDB but the row's read, and the
// record is reported, to be delivered again.
func TestW8_TheIssuesBadNumberIsRefusedBeforeTheWrite(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	rows := env.Table(t, "summaries", false)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "shop", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: "Order", Composite: []string{"orderId"}}}},
		Projections: []host.ProjectionConfig{{Name: "summaries", Table: rows, Checkpoint: host.CheckpointConfig{Field: "version"},
			Plugin: wasmbuild.BuildPath(t, "../host/swap/testdata/badoutput/badnumber")}},
	}
	h, err := host.New(ctx, cfg, host.WithClient(env.Client), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	evs, err := h.Append(ctx, "Order", "o-1", 0,
		host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c-1")}},
		host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("a"), "price": abi.N("2.5")}})
	require.NoError(t, err)
	h.ResetRequestCounts()

	res, err := h.ProcessBatch(ctx, []host.Record{insertRecord(h, evs[0], 1), insertRecord(h, evs[1], 2)})
	require.NoError(t, err)
	out := res.Projections["summaries"].Rows
	require.Len(t, out, 1)
	require.ErrorIs(t, out[0].Err, host.ErrPluginOutput)
	var oe *logic.OutputError
	require.True(t, errors.As(out[0].Err, &oe))
	assert.Equal(t, logic.OutputError{Projection: "summaries", Plugin: "order-summary@1.0.1", Stream: "Order", StreamID: "o-1",
		Version: 2, Type: "ItemAdded", Output: "to_item", Path: "qty", Problem: oe.Problem}, *oe)
	assert.Contains(t, oe.Problem, `is N "not-a-number": is not a number DynamoDB can store`)
	assert.Contains(t, out[0].Err.Error(), "fix the plugin", "what to do")
	assert.Equal(t, map[string]int64{"GetItem": 1}, h.RequestCounts(), "the new row's fold failed without a write: the row is read, nothing is written")
	assert.Nil(t, env.Get(t, rows, abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")}))
	resp, err := res.Response()
	require.NoError(t, err)
	assert.Equal(t, []host.ItemFailure{{ItemIdentifier: "1"}}, resp.BatchItemFailures)
}

// outputLedger is the test ledger with its evolve response changed: what
// a plugin with a bug in to_item or effects returns.
type outputLedger struct {
	*testlogic.Ledger
	change func(*abi.EvolveResponse)
}

func (l outputLedger) Evolve(ctx context.Context, req *abi.EvolveRequest) (*abi.EvolveResponse, error) {
	resp, err := l.Ledger.Evolve(ctx, req)
	if err == nil {
		l.change(resp)
	}
	return resp, err
}

// outputHost is a ledger host whose plugin's output change makes, with an
// outbox in the row's partition.
func outputHost(t *testing.T, change func(*abi.EvolveResponse)) (*host.Host, *testenv.Env, string) {
	t.Helper()
	return nativeLedgerHost(t, outputLedger{&testlogic.Ledger{}, change}, func(p *host.ProjectionConfig) {
		p.Revision = &host.RevisionConfig{Field: "rev"}
		p.ReadModel = host.ReadModelConfig{EntityType: "LedgerRow"}
		p.Outbox = &host.OutboxConfig{}
	})
}

// nativeLedgerHost is a host of the projection "ledger" on the native logic l,
// its projection changed by change.
func nativeLedgerHost(t *testing.T, l logic.Logic, change func(*host.ProjectionConfig)) (*host.Host, *testenv.Env, string) {
	t.Helper()
	env := testenv.Start(t)
	rows := env.Table(t, "ledger", false)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(t, "events", true), Schema: "test", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
		Projections: []host.ProjectionConfig{{Name: "ledger", Plugin: "native:ledger", Table: rows,
			Checkpoint: host.CheckpointConfig{Field: "version"}}},
	}
	change(&cfg.Projections[0])
	h, err := host.New(context.Background(), cfg, host.WithNative("ledger", l),
		host.WithClient(env.Client), host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, env, rows
}

// TestW8_ThePluginsOutputIsCheckedBeforeAnyWrite: an item with another
// row's key (which the host used to put over silently), an effect holding
// a number DynamoDB cannot store, an item over 400 KB and an empty set each
// fail the row before any write, naming the output, the attribute and the
// problem; nothing is written.
func TestW8_ThePluginsOutputIsCheckedBeforeAnyWrite(t *testing.T) {
	cases := []struct {
		name         string
		change       func(*abi.EvolveResponse)
		output, path string
		problem      string
	}{
		{"another key", func(r *abi.EvolveResponse) { r.Item["pk"] = abi.S("Ledger#someone-else") },
			"to_item", "pk", `is S "Ledger#someone-else", but it is a key attribute and the row's key holds S "Ledger#a"`},
		{"a bad number in an effect", func(r *abi.EvolveResponse) {
			r.Decisions[0].Effects = []abi.Value{abi.M(abi.Item{"amount": abi.N("1,5")})}
		}, "effect 0", "amount", `is N "1,5": is not a number`},
		{"over 400 KB", func(r *abi.EvolveResponse) { r.Item["blob"] = abi.S(strings.Repeat("x", 400*1024)) },
			"to_item", "blob", "over DynamoDB's limit of 409600 (400 KB)"},
		{"an empty set", func(r *abi.EvolveResponse) { r.Item["tags"] = abi.Value{Kind: abi.KindSS} },
			"to_item", "tags", "is an empty SS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			h, env, rows := outputHost(t, c.change)
			evs, err := h.Append(ctx, testlogic.Stream, "a", 0, host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("1")}})
			require.NoError(t, err)
			h.ResetRequestCounts()
			res, err := h.ApplyEvents(ctx, "ledger", evs...)
			require.NoError(t, err)
			o := res.Rows[0]
			require.ErrorIs(t, o.Err, host.ErrPluginOutput)
			var oe *logic.OutputError
			require.True(t, errors.As(o.Err, &oe))
			assert.Equal(t, "ledger", oe.Projection)
			assert.Equal(t, "ledger@1.0.0", oe.Plugin)
			assert.Equal(t, []any{"Acct", "a", uint64(1), "Add"}, []any{oe.Stream, oe.StreamID, oe.Version, oe.Type})
			assert.Equal(t, c.output, oe.Output)
			assert.Equal(t, c.path, oe.Path)
			assert.Contains(t, oe.Problem, c.problem)
			assert.False(t, o.Written)
			assert.Equal(t, map[string]int64{"GetItem": 1}, h.RequestCounts(), "the new row's fold failed without a write: the row is read, nothing is written")
			assert.Nil(t, env.Get(t, rows, testlogic.RowKey("a")))
			assert.Nil(t, env.Get(t, rows, testlogic.RowKey("someone-else")))
		})
	}
}

// keyLedger is the test ledger with its key function's results changed.
type keyLedger struct {
	*testlogic.Ledger
	change func(abi.Item)
}

func (l keyLedger) Key(ctx context.Context, req *abi.KeyRequest) (*abi.KeyResponse, error) {
	resp, err := l.Ledger.Key(ctx, req)
	if err == nil {
		for _, k := range resp.Keys {
			l.change(k.Key)
		}
	}
	return resp, err
}

// TestW8_AKeyDynamoDBWouldRefuseFailsTheRowNamingTheAttribute: a key
// function that returns a number DynamoDB cannot store, or a partition or
// sort key value over DynamoDB's length limits, fails the row before any
// request, naming the attribute and what to fix; nothing is written.
func TestW8_AKeyDynamoDBWouldRefuseFailsTheRowNamingTheAttribute(t *testing.T) {
	cases := []struct {
		name   string
		change func(abi.Item)
		want   []string
	}{
		{"a bad number", func(k abi.Item) { k["sk"] = abi.N("1e") }, []string{`key attribute "sk" is N "1e"`, "fix the plugin's key function"}},
		{"a long partition key", func(k abi.Item) { k["pk"] = abi.S(strings.Repeat("p", 2049)) },
			[]string{`key attribute "pk" is 2049 bytes long`, "partition key value over 2048 bytes"}},
		{"a long sort key", func(k abi.Item) { k["sk"] = abi.S(strings.Repeat("s", 1025)) },
			[]string{`key attribute "sk" is 1025 bytes long`, "sort key value over 1024 bytes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			h, _, _ := nativeLedgerHost(t, keyLedger{&testlogic.Ledger{}, c.change}, func(*host.ProjectionConfig) {})
			evs, err := h.Append(ctx, testlogic.Stream, "a", 0, host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N("1")}})
			require.NoError(t, err)
			h.ResetRequestCounts()
			res, err := h.ApplyEvents(ctx, "ledger", evs...)
			require.NoError(t, err)
			assert.Empty(t, res.Rows, "no row is folded")
			require.Len(t, res.KeyFailures, 1, "the event's key failed")
			require.Error(t, res.KeyFailures[0].Err)
			for _, w := range c.want {
				assert.Contains(t, res.KeyFailures[0].Err.Error(), w)
			}
			assert.Empty(t, h.RequestCounts(), "nothing is sent to DynamoDB")
		})
	}
}
