package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// kinesisDemo is `host demo --kinesis`: the order-summary demo read the
// way `host run` reads a Kinesis data stream. The event table streams its
// changes to a Kinesis stream of ddblocal (its streaming destination, with
// duplicates and reordering on, as AWS warns they happen); change-feed
// readers, one per worker, share its shards through a lease table; every
// row is then checked against the in-order fold of its stream.
type kinesisDemo struct {
	plugin    string
	cacheDir  string
	orders    int
	workers   int
	shards    int
	batch     int
	seed      uint64
	dupRate   float64
	reorder   float64
	within    time.Duration
	out       io.Writer
	logger    *slog.Logger
	nativeFor func() (logic.Logic, error)
}

// feedCounter counts the records the readers read (duplicates included)
// and the batches they processed.
type feedCounter struct {
	sidecar.NopObserver
	records, batches atomic.Int64
	shards           sync.Map // shard id -> true
}

func (c *feedCounter) ShardRead(_, shard string, n int, _ time.Duration) {
	c.records.Add(int64(n))
	c.shards.Store(shard, true)
}

func (c *feedCounter) BatchProcessed(string, string, *host.Result, time.Duration, error) {
	c.batches.Add(1)
}

func (d *kinesisDemo) run(ctx context.Context) error {
	start := time.Now()
	srv, err := ddblocal.Start(ctx, ddblocal.Options{Logger: d.logger, Kinesis: ddblocal.KinesisOptions{OnDemandShards: d.shards,
		Faults: ddblocal.KinesisFaults{DuplicateRate: d.dupRate, ReorderRate: d.reorder, Seed: d.seed}}})
	if err != nil {
		return err
	}
	defer srv.Close()
	client, err := ddbclient.NewClient(ctx, srv.Endpoint(), "us-east-1")
	if err != nil {
		return err
	}
	if _, err := demoTables(ctx, client); err != nil {
		return err
	}
	cfg := demoConfig(d.plugin, d.cacheDir)
	cfg.Sidecar = &host.SidecarConfig{LeaseTable: "demo-leases", BatchSize: d.batch, PollInterval: host.Duration(50 * time.Millisecond),
		LeaseDuration: host.Duration(3 * time.Second), Kinesis: &host.KinesisConfig{Stream: "events-changes", Endpoint: srv.Endpoint()}}
	native, err := d.nativeFor()
	if err != nil {
		return err
	}
	newHost := func() (*host.Host, error) {
		opts := []host.Option{host.WithClient(client), host.WithLogger(d.logger)}
		if d.plugin == "native" {
			opts = append(opts, host.WithNative("order-summary", native))
		}
		return host.New(ctx, cfg, opts...)
	}
	h, err := newHost()
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	// the lease table, the Kinesis stream and the event table's streaming
	// destination, as `host tables create` makes them
	if _, err := h.CreateTables(ctx); err != nil {
		return err
	}
	heads, err := appendOrders(ctx, h, d.orders, rand.New(rand.NewPCG(d.seed, 7)))
	if err != nil {
		return err
	}
	events := 0
	for _, v := range heads {
		events += int(v)
	}
	cnt := &feedCounter{}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, d.workers)
	readStart := time.Now()
	for w := 0; w < d.workers; w++ {
		wh, err := newHost()
		if err != nil {
			return err
		}
		defer wh.Close(ctx)
		wc := *cfg
		sc := *cfg.Sidecar
		sc.WorkerID = fmt.Sprintf("demo-%d", w+1)
		wc.Sidecar = &sc
		r, err := sidecar.New(ctx, wh, &wc, sidecar.Options{DynamoDB: client, Observer: cnt, Logger: d.logger})
		if err != nil {
			return err
		}
		go func() { done <- r.Run(runCtx) }()
	}
	// wait until every row equals the in-order fold of its stream
	var bad []string
	deadline := time.Now().Add(d.within)
	for {
		if bad, err = verifyQuiet(ctx, h, native, heads); err != nil {
			return err
		}
		if len(bad) == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-done:
			return fmt.Errorf("a change-feed reader stopped: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	readTime := time.Since(readStart)
	stop()
	for w := 0; w < d.workers; w++ {
		if err := <-done; err != nil {
			return fmt.Errorf("a change-feed reader stopped: %w", err)
		}
	}
	w := d.out
	fmt.Fprintf(w, "dynafold demo — order-summary plugin %s through a Kinesis data stream, seed %d\n", d.plugin, d.seed)
	fmt.Fprintf(w, "  change feed:   %d events of %d orders streamed to Kinesis (%d shards; %.0f%% duplicated, %.0f%% reordered by the destination)\n",
		events, len(heads), d.shards, d.dupRate*100, d.reorder*100)
	fmt.Fprintf(w, "  readers:       %d workers read %d records (duplicates included) in %d batches from %d shards\n",
		d.workers, cnt.records.Load(), cnt.batches.Load(), mapLen(&cnt.shards))
	fmt.Fprintf(w, "  time:          %s until every row was folded, %s in all\n", readTime.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if len(bad) == 0 {
		fmt.Fprintf(w, "  check:         all %d rows equal the in-order fold of their stream\n", len(heads))
		return nil
	}
	fmt.Fprintf(w, "  check:         %d rows DIFFER after %s: %v\n", len(bad), d.within, bad)
	return fmt.Errorf("%d of %d rows differ from the in-order fold of their stream", len(bad), len(heads))
}

// verifyQuiet is verify without printing the rows that differ (they may
// still be on their way).
func verifyQuiet(ctx context.Context, h *host.Host, native logic.Logic, heads map[string]uint64) ([]string, error) {
	return verifyRows(ctx, h, native, heads, false)
}

func mapLen(m *sync.Map) int {
	n := 0
	m.Range(func(any, any) bool { n++; return true })
	return n
}
