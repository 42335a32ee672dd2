package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/ddbclient"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

const demoUsage = `usage: host demo [--plugin F] [--orders N] [--lanes N] [--batch N] [--seed N] [--kinesis]
       host demo --config F [--events F] [--plugin F] [--projection P] [--copies N]

Runs the main job on the embedded default, with no AWS account: it starts
ddblocal in-process, appends events, delivers the event table's change feed
as a Lambda event source mapping would (concurrent lanes, shuffled batches,
duplicates, retries), folds it through the plugin and checks every row
against the in-order fold of its stream; it exits 1 if a row differs.

Without --config it runs the order-summary example plugin on order streams.
With --config it runs your projection on copies of your fixture's events;
its tables are created in the in-process ddblocal, whatever the
configuration's endpoint, and its effects are committed there and never
sent to outbox.deliver's target. Nothing leaves the process.

Examples:
  host demo
  host demo --config dynafold.json --events testdata/events.json

flags:
`

func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	pluginPath := fs.String("plugin", "build/plugins/order-summary.wasm", "the order-summary plugin (.wasm); \"native\" runs the same Go logic without Wasm")
	orders := fs.Int("orders", 300, "order streams to append")
	lanes := fs.Int("lanes", 10, "concurrent lanes (Lambda's ParallelizationFactor)")
	batchSize := fs.Int("batch", 100, "maximum records per batch (Lambda's BatchSize)")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "random seed of the event mix, the batch splits and the shuffles")
	cacheDir := fs.String("cache-dir", ".cache/wazero", "wazero compilation cache directory (\"\" for none)")
	cfgFile := fs.String("config", "", "run any plugin: the configuration naming the event store and the projection (--plugin overrides its plugin); its tables are created in the in-process ddblocal")
	events := fs.String("events", "", "with --config: the events to append, a plugin fixture's events file (default: the projection's hotSwap.fixture.events)")
	copies := fs.Int("copies", 20, "with --config: copies of the fixture's stream instances to append (under ids suffixed ~1, ~2, …)")
	projection := fs.String("projection", "", "with --config: the projection to run (default: the only one)")
	kinesis := fs.Bool("kinesis", false, "read the change feed as `host run` reads a Kinesis data stream: the event table streams its changes to ddblocal's Kinesis stream (with duplicates and reordering), and --workers change-feed readers share its shards")
	workers := fs.Int("workers", 2, "with --kinesis: change-feed readers sharing the stream's shards")
	shards := fs.Int("shards", 4, "with --kinesis: shards of the Kinesis stream")
	dup := fs.Float64("duplicates", 0.05, "with --kinesis: probability that the streaming destination writes a change twice")
	reorder := fs.Float64("reorder", 0.05, "with --kinesis: probability that the streaming destination writes a change after the next one of its shard")
	fs.SetOutput(stderrOf(ctx))
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return err
	}
	if *kinesis && *cfgFile != "" {
		return fmt.Errorf("--kinesis runs the built-in order-summary demo: leave out --config")
	}
	if *cfgFile != "" {
		d := &configDemo{cfgPath: *cfgFile, projection: *projection, events: *events, copies: *copies,
			lanes: *lanes, batch: *batchSize, seed: *seed, out: stdoutOf(ctx)}
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "plugin" {
				d.plugin = *pluginPath
			}
		})
		return d.run(ctx)
	}
	if *pluginPath != "native" {
		if _, err := os.Stat(*pluginPath); err != nil {
			return fmt.Errorf("plugin %s: %w (build it with `make plugins`, or run the demo with `make demo`)", *pluginPath, err)
		}
	}
	if *kinesis {
		d := &kinesisDemo{plugin: *pluginPath, cacheDir: *cacheDir, orders: *orders, workers: *workers, shards: *shards, batch: *batchSize,
			seed: *seed, dupRate: *dup, reorder: *reorder, within: 2 * time.Minute, out: stdoutOf(ctx),
			logger: slog.New(slog.DiscardHandler), nativeFor: nativeOrderSummary}
		return d.run(ctx)
	}
	start := time.Now()
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		return err
	}
	defer srv.Close()
	client, err := ddbclient.NewClient(ctx, srv.Endpoint(), "us-east-1")
	if err != nil {
		return err
	}
	streamArn, err := demoTables(ctx, client)
	if err != nil {
		return err
	}
	cfg := demoConfig(*pluginPath, *cacheDir)
	native, err := nativeOrderSummary()
	if err != nil {
		return err
	}
	// the report is the demo's output: the host's warnings go to stderr,
	// its informational lines (a plugin loaded) do not
	warnings := slog.New(slog.NewTextHandler(stderrOf(ctx), &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := []host.Option{host.WithClient(client), host.WithLogger(warnings)}
	if *pluginPath == "native" {
		opts = append(opts, host.WithNative("order-summary", native))
	}
	h, err := host.New(ctx, cfg, opts...)
	if err != nil {
		return err
	}
	defer h.Close(ctx)

	rng := rand.New(rand.NewPCG(*seed, 7))
	heads, err := appendOrders(ctx, h, *orders, rng)
	if err != nil {
		return err
	}
	sc := dynamodbstreams.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("dynafold", "dynafold", "")},
		func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(srv.Endpoint()) })
	records, err := readFeed(ctx, sc, streamArn)
	if err != nil {
		return err
	}
	h.ResetRequestCounts()
	applyStart := time.Now()
	var st replayStats
	if err := replay(ctx, h, records, *lanes, *batchSize, *seed, &st); err != nil {
		return err
	}
	applyTime := time.Since(applyStart)
	counts := h.RequestCounts()
	bad, err := verify(ctx, h, native, heads)
	if err != nil {
		return err
	}
	report(stdoutOf(ctx), *pluginPath, *seed, len(records), len(heads), &st, counts, applyTime, time.Since(start), bad)
	if len(bad) > 0 {
		return fmt.Errorf("%d of %d rows differ from the in-order fold of their stream", len(bad), len(heads))
	}
	return nil
}

func nativeOrderSummary() (logic.Logic, error) {
	p, err := guest.New(ordersummary.Projection)
	if err != nil {
		return nil, err
	}
	return logic.Native(p, "order-summary"), nil
}

// demoConfig is the demo's configuration: the order event store and the
// order-summary projection of plugin ("native": the same Go logic
// without Wasm).
func demoConfig(plugin, cacheDir string) *host.Config {
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: "events", Schema: "shop", SchemaVersion: 1, Streams: []host.StreamConfig{
			{Name: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, Composite: []string{"orderId"}}}},
		Plugins: host.PluginDefaults{CacheDir: cacheDir},
		Projections: []host.ProjectionConfig{{Name: "summaries", Plugin: plugin, Table: "order-summaries",
			Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}}},
	}
	if plugin == "native" {
		cfg.Projections[0].Plugin = "native:order-summary"
	}
	return cfg
}

// demoTables creates the event table (with a NEW_IMAGE stream) and the
// read-model table, and returns the event table's stream ARN.
func demoTables(ctx context.Context, c *dynamodb.Client) (string, error) {
	keyed := func(name string, stream bool) *dynamodb.CreateTableInput {
		in := &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}, {AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}}}
		if stream {
			in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
		}
		return in
	}
	out, err := c.CreateTable(ctx, keyed("events", true))
	if err != nil {
		return "", fmt.Errorf("creating the event table: %w", err)
	}
	if _, err := c.CreateTable(ctx, keyed("order-summaries", false)); err != nil {
		return "", fmt.Errorf("creating the read-model table: %w", err)
	}
	return aws.ToString(out.TableDescription.LatestStreamArn), nil
}

// appendOrders appends the orders' events in rounds, so appends of
// different orders interleave in the change feed, and returns each order's
// head version.
func appendOrders(ctx context.Context, h *host.Host, n int, rng *rand.Rand) (map[string]uint64, error) {
	type plan struct {
		id     string
		events []host.NewEvent
	}
	plans := make([]*plan, n)
	for i := range plans {
		p := &plan{id: fmt.Sprintf("o-%04d", i)}
		p.events = append(p.events, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S(fmt.Sprintf("c-%d", rng.IntN(50)))}})
		for j := 1 + rng.IntN(6); j > 0; j-- {
			price := fmt.Sprintf("%d.%02d", 1+rng.IntN(99), rng.IntN(100))
			p.events = append(p.events, host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("sku-" + strconv.Itoa(rng.IntN(500))), "price": abi.N(price)}})
		}
		if rng.IntN(3) > 0 {
			p.events = append(p.events, host.NewEvent{Type: "OrderShipped", Data: abi.Item{}})
		}
		plans[i] = p
	}
	heads := map[string]uint64{}
	for pending := true; pending; {
		pending = false
		for _, p := range plans {
			if len(p.events) == 0 {
				continue
			}
			k := min(len(p.events), 1+rng.IntN(3)) // one append of 1–3 events
			if _, err := h.Append(ctx, "Order", p.id, heads[p.id], p.events[:k]...); err != nil {
				return nil, err
			}
			heads[p.id] += uint64(k)
			p.events = p.events[k:]
			pending = pending || len(p.events) > 0
		}
	}
	return heads, nil
}

// verify compares every row with the in-order fold of its stream, computed
// by the same Go logic natively, and returns the order ids that differ.
func verify(ctx context.Context, h *host.Host, native logic.Logic, heads map[string]uint64) ([]string, error) {
	return verifyRows(ctx, h, native, heads, true)
}

// verifyRows is verify; show prints each row that differs.
func verifyRows(ctx context.Context, h *host.Host, native logic.Logic, heads map[string]uint64, show bool) ([]string, error) {
	ids := make([]string, 0, len(heads))
	for id := range heads {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var bad []string
	for _, id := range ids {
		evs, err := h.ReadStream(ctx, "Order", id, 0, heads[id])
		if err != nil {
			return nil, err
		}
		srcs := make([]abi.SourcedEvent, len(evs))
		for i, ev := range evs {
			srcs[i] = abi.SourcedEvent{Source: "Order", Event: ev}
		}
		key := ordersummary.RowKey(id)
		want, err := native.Evolve(ctx, &abi.EvolveRequest{Key: key, StreamID: id, Events: srcs})
		if err != nil {
			return nil, err
		}
		got, _, err := h.Row(ctx, "summaries", key)
		if err != nil {
			return nil, err
		}
		if !rowMatches(got, want.Item, heads[id]) {
			if !show {
				bad = append(bad, id)
				continue
			}
			fmt.Fprintf(stderrOf(ctx), "row %s differs:\n  got  %s\n  want %s (version %d)\n", id, plainJSON(got), plainJSON(want.Item), heads[id])
			bad = append(bad, id)
		}
	}
	return bad, nil
}

// rowMatches compares the plugin's attributes and the checkpoint.
func rowMatches(got, want abi.Item, head uint64) bool {
	if got == nil {
		return false
	}
	for k, v := range want {
		if k == ordersummary.Checkpoint {
			continue
		}
		if !v.Equal(got[k]) {
			return false
		}
	}
	return got[ordersummary.Checkpoint].Equal(abi.N(strconv.FormatUint(head, 10)))
}

func report(w io.Writer, plugin string, seed uint64, records, rows int, st *replayStats, counts map[string]int64, applyTime, total time.Duration, bad []string) {
	fmt.Fprintf(w, "dynafold demo — order-summary plugin %s, seed %d\n", plugin, seed)
	fmt.Fprintf(w, "  change feed:   %d records, %d rows (order streams)\n", records, rows)
	reportRun(w, st, counts, applyTime, total)
	if len(bad) == 0 {
		fmt.Fprintf(w, "  check:         all %d rows equal the in-order fold of their stream\n", rows)
	} else {
		fmt.Fprintf(w, "  check:         %d rows DIFFER: %v\n", len(bad), bad)
	}
}
