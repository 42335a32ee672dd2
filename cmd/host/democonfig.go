package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism/transport"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/keys"
)

// configDemo is `host demo --config F`: the demo for any plugin.
type configDemo struct {
	cfgPath, plugin, projection, events string
	copies, lanes, batch                int
	seed                                uint64
	out                                 io.Writer
}

// run starts ddblocal in-process, creates the configuration's tables,
// appends the fixture's events (and copies of its stream instances under
// new ids, appends interleaved), delivers the event table's change feed in
// shuffled, redelivered batches over lanes, and checks that every row
// equals the in-order fold of the stored events through the same plugin.
func (d *configDemo) run(ctx context.Context) error {
	start := time.Now()
	cfg, err := host.LoadConfig(d.cfgPath)
	if err != nil {
		return err
	}
	pi := -1
	for i, p := range cfg.Projections {
		if p.Name == d.projection || (d.projection == "" && len(cfg.Projections) == 1) {
			pi = i
		}
	}
	if pi < 0 {
		return fmt.Errorf("name the projection to run with --projection (the configuration has %d)", len(cfg.Projections))
	}
	pc := &cfg.Projections[pi]
	cfg.Projections = cfg.Projections[pi : pi+1]
	if d.plugin != "" {
		pc.Plugin = d.plugin
	}
	if !filepath.IsAbs(pc.Plugin) {
		pc.Plugin = filepath.Join(filepath.Dir(d.cfgPath), pc.Plugin)
	}
	eventsPath := d.events
	if eventsPath == "" && pc.HotSwap != nil && pc.HotSwap.Fixture != nil {
		eventsPath = filepath.Join(filepath.Dir(d.cfgPath), pc.HotSwap.Fixture.Events)
	}
	if eventsPath == "" {
		return fmt.Errorf("--events is required: a JSON array of events ({\"stream\", \"streamId\", \"version\", \"type\", \"data\"}, data in DynamoDB JSON), the format of a plugin's test fixture")
	}
	pc.HotSwap, pc.Shadow = nil, nil // the demo runs the fold, not the deployment around it
	// The demo's events are copies of a fixture: their effects are
	// committed to the outbox in the in-process ddblocal and never sent to
	// the configuration's outbox.deliver target (a webhook, a queue, a bus
	// that real consumers read).
	undelivered := pc.Outbox != nil && pc.Outbox.Deliver != nil
	if pc.Outbox != nil {
		pc.Outbox.Deliver = nil
	}
	fixture, err := readFixtureEvents(eventsPath)
	if err != nil {
		return err
	}

	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		return err
	}
	defer srv.Close()
	client, err := ddbclient.NewClient(ctx, srv.Endpoint(), "us-east-1")
	if err != nil {
		return err
	}
	cfg.Endpoint = ""
	h, err := host.New(ctx, cfg, host.WithClient(client))
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	if _, err := h.CreateTables(ctx); err != nil {
		return err
	}
	desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(cfg.EventStore.Table)})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(d.seed, 7))
	heads, err := appendFixture(ctx, h, fixture, d.copies, rng)
	if err != nil {
		return err
	}
	sc := dynamodbstreams.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("dynafold", "dynafold", "")},
		func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(srv.Endpoint()) })
	records, err := readFeed(ctx, sc, aws.ToString(desc.Table.LatestStreamArn))
	if err != nil {
		return err
	}
	h.ResetRequestCounts()
	applyStart := time.Now()
	var st replayStats
	if err := replay(ctx, h, records, d.lanes, d.batch, d.seed, &st); err != nil {
		return err
	}
	applyTime := time.Since(applyStart)
	counts := h.RequestCounts()
	rows, bad, err := d.verify(ctx, h, pc, heads)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "dynafold demo — projection %s, plugin %s, events %s, seed %d\n", pc.Name, pc.Plugin, eventsPath, d.seed)
	reportCounts(d.out, len(records), len(heads), rows, &st, counts, applyTime, time.Since(start))
	if undelivered {
		fmt.Fprintf(d.out, "  outbox:        effects committed in the in-process ddblocal, none sent to outbox.deliver (the demo sends nothing out)\n")
	}
	if len(bad) > 0 {
		fmt.Fprintf(d.out, "  check:         %d rows DIFFER: %s\n", len(bad), strings.Join(bad, ", "))
		return fmt.Errorf("%d of %d rows differ from the in-order fold of their streams", len(bad), rows)
	}
	fmt.Fprintf(d.out, "  check:         all %d rows equal the in-order fold of their streams\n", rows)
	return nil
}

// readFixtureEvents reads a plugin fixture's events file.
func readFixtureEvents(path string) ([]swap.SrcEvent, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	evs, err := swap.ParseEvents(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return evs, nil
}

type instance struct{ stream, id string }

// appendFixture appends the fixture's instances, and copies suffixed
// "~1".."~N-1", in rounds of one to three events per instance, so appends
// of different instances interleave in the change feed. It returns every
// instance's head.
func appendFixture(ctx context.Context, h *host.Host, fx []swap.SrcEvent, copies int, rng *rand.Rand) (map[instance]uint64, error) {
	base := map[instance][]swap.SrcEvent{}
	var order []instance
	for _, e := range fx {
		in := instance{e.Stream, e.StreamID}
		if base[in] == nil {
			order = append(order, in)
		}
		base[in] = append(base[in], e)
	}
	type plan struct {
		in     instance
		events []host.NewEvent
	}
	var plans []*plan
	for c := 0; c < max(1, copies); c++ {
		for _, in := range order {
			evs := append([]swap.SrcEvent(nil), base[in]...)
			sort.SliceStable(evs, func(i, j int) bool { return evs[i].Version < evs[j].Version })
			p := &plan{in: in}
			if c > 0 {
				p.in.id = fmt.Sprintf("%s~%d", in.id, c)
			}
			for _, e := range evs {
				data := abi.CloneItem(e.Data)
				delete(data, "_tag")
				p.events = append(p.events, host.NewEvent{Type: e.Type, Data: data, Metadata: e.Metadata})
			}
			plans = append(plans, p)
		}
	}
	heads := map[instance]uint64{}
	for pending := true; pending; {
		pending = false
		for _, p := range plans {
			if len(p.events) == 0 {
				continue
			}
			k := min(len(p.events), 1+rng.IntN(3))
			if _, err := h.Append(ctx, p.in.stream, p.in.id, heads[p.in], p.events[:k]...); err != nil {
				return nil, fmt.Errorf("appending to %s %s: %w", p.in.stream, p.in.id, err)
			}
			heads[p.in] += uint64(k)
			p.events = p.events[k:]
			pending = pending || len(p.events) > 0
		}
	}
	return heads, nil
}

// verify folds every stored event, in order, through the same plugin over
// an empty read model and compares each row the fold gives with the table's:
// every attribute the plugin wrote, the checkpoint left out. It returns the
// number of rows and the keys of those that differ.
func (d *configDemo) verify(ctx context.Context, h *host.Host, pc *host.ProjectionConfig, heads map[instance]uint64) (int, []string, error) {
	l, _, err := transport.LoadFile(ctx, pc.Plugin, plugin.Config{PoolSize: 1})
	if err != nil {
		return 0, nil, err
	}
	defer l.Close(ctx)
	var all []swap.SrcEvent
	for in, head := range heads {
		evs, err := h.ReadStream(ctx, in.stream, in.id, 0, head)
		if err != nil {
			return 0, nil, err
		}
		for _, ev := range evs {
			all = append(all, swap.SrcEvent{Event: ev})
		}
	}
	want, err := swap.Fold(ctx, l, all)
	if err != nil {
		return 0, nil, err
	}
	var bad []string
	for _, r := range want {
		k := keys.String(r.Key)
		got, ok, err := h.Row(ctx, pc.Name, r.Key)
		if err != nil {
			return 0, nil, err
		}
		switch {
		case r.Err != nil:
			fmt.Fprintf(os.Stderr, "row %s: the in-order fold fails: %v\n", k, r.Err)
			bad = append(bad, k)
		case r.Item == nil && ok:
			fmt.Fprintf(os.Stderr, "row %s: the fold removes it, the table has %s\n", k, plainJSON(got))
			bad = append(bad, k)
		case r.Item != nil && !itemCovers(got, r.Item, pc.Checkpoint.Field):
			fmt.Fprintf(os.Stderr, "row %s differs:\n  table %s\n  fold  %s\n", k, plainJSON(got), plainJSON(r.Item))
			bad = append(bad, k)
		}
	}
	return len(want), bad, nil
}

// itemCovers reports whether got holds every attribute of want, skip aside.
func itemCovers(got, want abi.Item, skip string) bool {
	if got == nil {
		return false
	}
	for k, v := range want {
		if k != skip && !v.Equal(got[k]) {
			return false
		}
	}
	return true
}

// reportCounts prints the feed, the deliveries, the requests and the time.
func reportCounts(w io.Writer, records, instances, rows int, st *replayStats, counts map[string]int64, applyTime, total time.Duration) {
	fmt.Fprintf(w, "  change feed:   %s, %s, %s\n", plural(records, "record"), plural(instances, "stream instance"), plural(rows, "row"))
	reportRun(w, st, counts, applyTime, total)
}

// reportRun prints the deliveries, the DynamoDB requests by type and the
// time, the part of a demo's report every plugin shares.
func reportRun(w io.Writer, st *replayStats, counts map[string]int64, applyTime, total time.Duration) {
	fmt.Fprintf(w, "  deliveries:    %d records in %d batches (%d redelivered, %d reported failed)\n",
		st.deliveries.Load(), st.batches.Load(), st.redelivered.Load(), st.failedRecords.Load())
	ops := make([]string, 0, len(counts))
	var n int64
	for op, c := range counts {
		ops = append(ops, op)
		n += c
	}
	sort.Strings(ops)
	fmt.Fprintf(w, "  DynamoDB:      %d requests:", n)
	for _, op := range ops {
		fmt.Fprintf(w, " %s %d", op, counts[op])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  time:          %s applying (%.0f records/s), %s in all\n", applyTime.Round(time.Millisecond), float64(st.deliveries.Load())/applyTime.Seconds(), total.Round(time.Millisecond))
}
