package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/netenv"
	"github.com/dynafold/dynafold/internal/testlogic"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	shipmentsummary "github.com/dynafold/dynafold/plugins/examples/shipment-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// rttLatency is the round trip BenchmarkBatchRoundTrips gives every
// DynamoDB request, new connection and webhook delivery.
const rttLatency = 5 * time.Millisecond

// rttShape is one batch shape of BenchmarkBatchRoundTrips: a host at the
// default configuration (its own DynamoDB client, to the network
// environment's endpoint), and, per iteration, a batch of 100 records made
// without latency.
type rttShape struct {
	name  string
	host  func(tb testing.TB, n *netenv.Env) *host.Host
	batch func(tb testing.TB, h *host.Host, n *netenv.Env, i int) []host.Record
	// faults, when set, are ddblocal's faults during the timed batch.
	faults *ddblocal.FaultConfig
	// check, when set, checks the batch's result.
	check func(tb testing.TB, res *host.Result)
}

// rttShapes are the shapes BenchmarkBatchRoundTrips measures, each a batch
// of 100 records.
func rttShapes() []rttShape {
	return []rttShape{
		{name: "contiguous/rows=10", host: rttOrderHost, batch: func(tb testing.TB, h *host.Host, _ *netenv.Env, i int) []host.Record {
			return appendOrders(tb, h, fmt.Sprintf("c10-%d", i), 10, 10)
		}},
		{name: "contiguous/rows=100", host: rttOrderHost, batch: func(tb testing.TB, h *host.Host, _ *netenv.Env, i int) []host.Record {
			return appendOrders(tb, h, fmt.Sprintf("c100-%d", i), 100, 1)
		}},
		{name: "existing/rows=10", host: rttOrderHost, batch: func(tb testing.TB, h *host.Host, _ *netenv.Env, i int) []host.Record {
			return existingBatch(tb, h, fmt.Sprintf("e10-%d", i), 10, 10)
		}},
		{name: "existing/rows=100", host: rttOrderHost, batch: func(tb testing.TB, h *host.Host, _ *netenv.Env, i int) []host.Record {
			return existingBatch(tb, h, fmt.Sprintf("e100-%d", i), 100, 1)
		}},
		{name: "shuffled/rows=100", host: rttOrderHost, batch: shuffledBatch},
		{name: "gaps/rows=10", host: rttOrderHost, batch: func(tb testing.TB, h *host.Host, _ *netenv.Env, i int) []host.Record {
			recs := appendOrders(tb, h, fmt.Sprintf("g10-%d", i), 10, 15)
			var out []host.Record
			for r := range 10 {
				out = append(out, recs[r*15+5:r*15+15]...) // each row lacks versions 1-5
			}
			return out
		}},
		{name: "outbox/rows=20", host: rttOutboxHost, batch: func(tb testing.TB, h *host.Host, _ *netenv.Env, i int) []host.Record {
			var evs []abi.Event
			for r := range 20 {
				out, err := h.Append(context.Background(), testlogic.Stream, fmt.Sprintf("ob%d-%d", i, r), 0, add(1), add(2), add(3), add(4), add(5))
				if err != nil {
					tb.Fatal(err)
				}
				evs = append(evs, out...)
			}
			return records(h, evs)
		}, check: func(tb testing.TB, res *host.Result) {
			delivered := 0
			for _, o := range res.Projections["ledger"].Rows {
				delivered += o.Delivered
			}
			if delivered != 20 {
				tb.Fatalf("%d effects delivered, want 20 (one per row)", delivered)
			}
		}},
		{name: "multisource/instances=3", host: rttShipmentHost, batch: shipmentBatch},
		{name: "lostrace/rows=10", host: rttOrderHost, batch: func(tb testing.TB, h *host.Host, _ *netenv.Env, i int) []host.Record {
			return appendOrders(tb, h, fmt.Sprintf("lr-%d", i), 10, 10)
		}, faults: &ddblocal.FaultConfig{Script: []ddblocal.ScriptedFault{{Op: "PutItem", Code: "ConditionalCheckFailedException"}}},
			check: func(tb testing.TB, res *host.Result) {
				retried := 0
				for _, o := range res.Projections["summaries"].Rows {
					retried += o.Attempts - 1
				}
				if retried != 1 {
					tb.Fatalf("%d retried writes, want the one forced lost race", retried)
				}
			}},
	}
}

// BenchmarkBatchRoundTrips measures what a batch of 100 records costs in
// round trips: every DynamoDB request, new connection and webhook delivery
// takes rttLatency (set after the setup of each batch), and rtt/batch is a
// batch's wall time divided by it. The counts are the requests of one batch
// by type, as the server saw them (a webhook delivery is "Deliver"),
// conns/batch the connections it opened, chain/batch the longest chain of
// requests each sent after the previous one's answer, and rowchain/batch
// the longest such chain of one row's requests: the round trips the
// batch's dependencies need, which a machine short of CPU does not
// lengthen the way it lengthens rtt/batch and chain/batch; cpu-µs/record
// is the process's CPU over the timed batches (the host's and the
// in-process ddblocal's), which the latency and a machine's other load
// change far less than the wall time; allocs/record and B/record are the
// process's allocations over them (exact where CPU is not; the host's and
// ddblocal's). The host runs at
// its default configuration (concurrency, its own DynamoDB client and HTTP
// transport) with native logic; one batch goes before the measured ones,
// as a previous batch would (the connections it opens are kept).
// DYNAFOLD_RTT_LATENCY sets another latency; DYNAFOLD_RTT_CPUPROFILE, a
// directory, gets a CPU profile of each timed batch (rttProfile);
// DYNAFOLD_RTT_MEMPROFILE, a file, every allocation of them (rttMemProfile);
// DYNAFOLD_RTT_DIRECT=1 serves the host from ddblocal's own server
// (rttDirect).
//
//	go test ./host -run '^$' -bench BatchRoundTrips -benchtime 20x
func BenchmarkBatchRoundTrips(b *testing.B) {
	for _, s := range rttShapes() {
		b.Run(s.name, func(b *testing.B) {
			n := netenv.Start(b)
			h := s.host(b, n)
			lat := benchLatency(b)
			// One batch first, as a previous batch would have: the
			// connections it opens are kept for the next.
			_ = runRTTBatch(b, s, n, h, -1, lat)
			counts := map[string]int{}
			var conns, chains, rowChains int64
			var sum rttCost
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := runRTTBatch(b, s, n, h, i, lat)
				sum.took, sum.cpu, sum.mallocs, sum.bytes = sum.took+c.took, sum.cpu+c.cpu, sum.mallocs+c.mallocs, sum.bytes+c.bytes
				for op, c := range n.Counts() {
					counts[op] += c
				}
				conns += n.Conns()
				chains += int64(netenv.Chain(n.Requests()))
				rowChains += int64(netenv.RowChain(n.Requests()))
			}
			b.ReportMetric(float64(sum.took)/float64(b.N)/float64(lat), "rtt/batch")
			b.ReportMetric(float64(sum.cpu.Microseconds())/float64(b.N)/100, "cpu-µs/record")
			b.ReportMetric(float64(sum.mallocs)/float64(b.N)/100, "allocs/record")
			b.ReportMetric(float64(sum.bytes)/float64(b.N)/100, "B/record")
			if rttDirect() {
				return
			}
			ops := make([]string, 0, len(counts))
			for op := range counts {
				ops = append(ops, op)
			}
			sort.Strings(ops)
			for _, op := range ops {
				b.ReportMetric(float64(counts[op])/float64(b.N), op+"/batch")
			}
			b.ReportMetric(float64(conns)/float64(b.N), "conns/batch")
			b.ReportMetric(float64(chains)/float64(b.N), "chain/batch")
			b.ReportMetric(float64(rowChains)/float64(b.N), "rowchain/batch")
		})
	}
}

// benchLatency is rttLatency, or DYNAFOLD_RTT_LATENCY (a duration) when
// set: a longer latency shows the round trips apart from the CPU a batch
// takes.
func benchLatency(tb testing.TB) time.Duration {
	v := os.Getenv("DYNAFOLD_RTT_LATENCY")
	if v == "" {
		return rttLatency
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		tb.Fatalf("DYNAFOLD_RTT_LATENCY=%q: want a positive duration such as 20ms", v)
	}
	return d
}

// rttCost is what a batch took: its wall time, and the process's CPU and
// allocations meanwhile (the host's and the in-process ddblocal's).
type rttCost struct {
	took, cpu      time.Duration
	mallocs, bytes uint64
}

// runRTTBatch makes batch i of shape s without latency, processes it with
// latency lat (and the shape's faults), checks it and returns what it
// cost; the environment's log and connection count are the batch's.
func runRTTBatch(b *testing.B, s rttShape, n *netenv.Env, h *host.Host, i int, lat time.Duration) (c rttCost) {
	b.StopTimer()
	defer b.StartTimer()
	recs := s.batch(b, h, n, i)
	if len(recs) != 100 {
		b.Fatalf("%d records, want a batch of 100", len(recs))
	}
	n.SetLatency(lat)
	if s.faults != nil {
		n.SetFaults(*s.faults)
	}
	n.Reset()
	stopProfile := rttProfile(b, i)
	stopMem := rttMemProfile(i)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start, cpu0 := time.Now(), cpuNow()
	b.StartTimer()
	res, err := h.ProcessBatch(context.Background(), recs)
	b.StopTimer()
	c.took, c.cpu = time.Since(start), cpuNow()-cpu0
	runtime.ReadMemStats(&m1)
	c.mallocs, c.bytes = m1.Mallocs-m0.Mallocs, m1.TotalAlloc-m0.TotalAlloc
	stopMem()
	stopProfile()
	n.SetLatency(0)
	if err != nil {
		b.Fatal(err)
	}
	if f := res.Failed(); len(f) > 0 {
		b.Fatalf("%d records failed", len(f))
	}
	if s.check != nil {
		s.check(b, res)
	}
	return c
}

// rttProfile starts a CPU profile of batch i, the timed part only, when
// DYNAFOLD_RTT_CPUPROFILE names a directory (the profile goes to
// batch-i.prof in it; `go tool pprof` given several merges them), and
// returns what stops it. The process's whole CPU is sampled, the
// in-process ddblocal's included, but not the batches' setup.
func rttProfile(b *testing.B, i int) (stop func()) {
	dir := os.Getenv("DYNAFOLD_RTT_CPUPROFILE")
	if dir == "" || i < 0 {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("batch-%d.prof", i)))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// rttMemProfile records every allocation of batch i, the timed part only,
// when DYNAFOLD_RTT_MEMPROFILE names a file, and returns what stops the
// recording: outside the timed batches nothing is recorded
// (runtime.MemProfileRate 0), within them every allocation (1). The file,
// written after each batch, is the heap profile of all the timed batches so
// far (`go tool pprof -sample_index=alloc_objects`).
func rttMemProfile(i int) (stop func()) {
	file := os.Getenv("DYNAFOLD_RTT_MEMPROFILE")
	if file == "" {
		return func() {}
	}
	if i < 0 {
		return func() {}
	}
	runtime.MemProfileRate = 1
	return func() {
		runtime.MemProfileRate = 0
		runtime.GC() // the profile is as of the last collection
		f, err := os.Create(file)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			panic(fmt.Sprintf("writing DYNAFOLD_RTT_MEMPROFILE: %v", err))
		}
	}
}

func init() {
	if os.Getenv("DYNAFOLD_RTT_MEMPROFILE") != "" {
		runtime.MemProfileRate = 0 // rttMemProfile records the timed batches only
	}
}

// rttDirect reports whether DYNAFOLD_RTT_DIRECT=1 points the host at
// ddblocal's own server (its endpoint, the server the embedded default
// runs) instead of the network environment's logging net/http server in
// front of ddblocal's handler. The server then counts no requests: the
// benchmark reports rtt/batch, cpu-µs/record and allocations only.
func rttDirect() bool { return os.Getenv("DYNAFOLD_RTT_DIRECT") == "1" }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// rttHost starts a host on the network environment at the default
// configuration, with the DynamoDB client the host builds for itself
// (the same idle connections), whose connections are dialed through the
// network environment: a new connection costs a round trip as it is
// dialed, as on a network.
func rttHost(tb testing.TB, n *netenv.Env, cfgJSON string, opts ...host.Option) *host.Host {
	tb.Helper()
	cfg, err := host.ParseConfig([]byte(cfgJSON))
	if err != nil {
		tb.Fatal(err)
	}
	url, dial := n.URL, n.DialContext
	if rttDirect() {
		// ddblocal's own server, as the embedded default serves it: the
		// latency is its FaultConfig.Latency (SetLatency sets it)
		url, dial = n.Server.Endpoint(), (&net.Dialer{}).DialContext
	}
	cfg.Endpoint = url
	idle := 0
	for _, p := range cfg.Effective().Projections {
		idle += 2 * p.Concurrency // as the host's own client keeps
	}
	client, err := ddbclient.NewClient(context.Background(), url, cfg.Region, func(o *dynamodb.Options) {
		o.HTTPClient = ddbclient.HTTPClient(max(idle, ddbclient.DefaultIdleConns)).
			WithTransportOptions(func(t *http.Transport) { t.DialContext = dial })
	})
	if err != nil {
		tb.Fatal(err)
	}
	opts = append(opts, host.WithClient(client))
	h, err := host.New(context.Background(), cfg, append(opts, host.WithLogger(quietLogger()))...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// rttOrderHost runs the order-summary projection natively.
func rttOrderHost(tb testing.TB, n *netenv.Env) *host.Host { return rttOrderHostWith(tb, n, "") }

// rttOrderHostWith is rttOrderHost with more fields of the projection's
// configuration (JSON, each preceded by a comma).
func rttOrderHostWith(tb testing.TB, n *netenv.Env, fields string) *host.Host {
	p, err := guest.New(ordersummary.Projection)
	if err != nil {
		tb.Fatal(err)
	}
	return rttHost(tb, n, fmt.Sprintf(`{
	  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
	  "projections": [{"name": "summaries", "plugin": "native:order-summary", "table": %q,
	    "checkpoint": {"field": %q}%s}]}`, n.Table(tb, "events", true), n.Table(tb, "summaries", false), ordersummary.Checkpoint, fields),
		host.WithNative("order-summary", logic.Native(p, "order-summary")))
}

// rttOutboxHost runs the ledger with an outbox in the rows' partitions,
// delivering to a webhook with the same latency; the fifth event of each
// row carries one effect.
func rttOutboxHost(tb testing.TB, n *netenv.Env) *host.Host { return rttOutboxHostWith(tb, n, "") }

// rttOutboxHostWith is rttOutboxHost with more fields of the outbox's
// configuration (JSON, each preceded by a comma).
func rttOutboxHostWith(tb testing.TB, n *netenv.Env, fields string) *host.Host {
	fx := testlogic.WithEffects(&testlogic.Ledger{}, 0)
	fx.SetOf(func(ev abi.Event) []abi.Value {
		if ev.Version%5 != 0 {
			return nil
		}
		return []abi.Value{testlogic.EffectOf(ev, 0)}
	})
	return rttHost(tb, n, fmt.Sprintf(`{
	  "eventStore": {"table": %q, "schema": "test", "streams": [{"name": %q, "composite": ["acctId"]}]},
	  "projections": [{"name": "ledger", "plugin": "native:ledger", "table": %q,
	    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "rev"},
	    "readModel": {"entityType": "LedgerRow"},
	    "outbox": {"deliver": {"webhook": {"url": %q}}%s}}]}`,
		n.Table(tb, "events", true), testlogic.Stream, n.Table(tb, "ledger", false), n.Webhook(tb), fields),
		host.WithNative("ledger", fx))
}

// rttShipmentHost runs the shipment summary natively: rows fed by three
// stream instances each.
func rttShipmentHost(tb testing.TB, n *netenv.Env) *host.Host {
	return rttHost(tb, n, fmt.Sprintf(`{
	  "eventStore": {"table": %q, "schema": "ship", "streams": [
	    {"name": "Order", "composite": ["orderId"]}, {"name": "Scan", "composite": ["shipmentId"]},
	    {"name": "Weigh", "composite": ["sessionId"]}]},
	  "projections": [{"name": "shipments", "plugin": "native:shipments", "table": %q,
	    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "revision"},
	    "readModel": {"entityType": %q}, "removal": {}}]}`,
		n.Table(tb, "events", true), n.Table(tb, "shipments", false), shipmentsummary.EntityType),
		host.WithNative("shipments", logic.Native(guest.MustNew(shipmentsummary.Projection), "shipments")))
}

// shuffledBatch: 100 orders with their first event applied; the batch
// brings the second event of 80 of them and redelivers the first of the
// other 20, shuffled.
func shuffledBatch(tb testing.TB, h *host.Host, _ *netenv.Env, i int) []host.Record {
	ctx := context.Background()
	prefix := fmt.Sprintf("s100-%d", i)
	first := appendOrders(tb, h, prefix, 100, 1)
	if res, err := h.ProcessBatch(ctx, first); err != nil || len(res.Failed()) > 0 {
		tb.Fatalf("applying the first events: %v", err)
	}
	var evs []abi.Event
	for r := range 80 {
		out, err := h.Append(ctx, "Order", fmt.Sprintf("%s-%d", prefix, r), 1,
			host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("9.99")}})
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, out...)
	}
	recs := append(records(h, evs), first[80:]...)
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	rng.Shuffle(len(recs), func(a, b int) { recs[a], recs[b] = recs[b], recs[a] })
	return recs
}

// existingBatch: n orders whose rows exist (their first event applied
// before the batch), and the next k events of each: rows that need their
// read (contiguous rows are of new orders, written without one).
func existingBatch(tb testing.TB, h *host.Host, prefix string, n, k int) []host.Record {
	ctx := context.Background()
	if res, err := h.ProcessBatch(ctx, appendOrders(tb, h, prefix, n, 1)); err != nil || len(res.Failed()) > 0 {
		tb.Fatalf("applying the first events: %v", err)
	}
	var evs []abi.Event
	for r := range n {
		add := make([]host.NewEvent, k)
		for j := range add {
			add[j] = host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("9.99")}}
		}
		out, err := h.Append(ctx, "Order", fmt.Sprintf("%s-%d", prefix, r), 1, add...)
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, out...)
	}
	return records(h, evs)
}

// shipmentBatch: 20 shipments, each fed by an order (two ParcelsAdded), its
// scanner (one Scanned) and a weighing session (two Weighed).
func shipmentBatch(tb testing.TB, h *host.Host, _ *netenv.Env, i int) []host.Record {
	ctx := context.Background()
	var evs []abi.Event
	appendTo := func(stream, id string, es ...host.NewEvent) {
		out, err := h.Append(ctx, stream, id, 0, es...)
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, out...)
	}
	for r := range 20 {
		sh := fmt.Sprintf("sh%d-%d", i, r)
		shipment := abi.Item{"shipmentId": abi.S(sh), "parcels": abi.N("1"), "kg": abi.N("2")}
		appendTo("Order", "o-"+sh, host.NewEvent{Type: "ParcelsAdded", Data: shipment}, host.NewEvent{Type: "ParcelsAdded", Data: shipment})
		appendTo("Scan", sh, host.NewEvent{Type: "Scanned", Data: abi.Item{"location": abi.S("Oslo")}})
		appendTo("Weigh", "w-"+sh, host.NewEvent{Type: "Weighed", Data: shipment}, host.NewEvent{Type: "Weighed", Data: shipment})
	}
	return records(h, evs)
}
