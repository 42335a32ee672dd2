package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/dynafold/dynafold/ddblocal"
)

func runDDBLocal(ctx context.Context, args []string) error {
	opts, err := ddblocalOptions(args)
	if err != nil {
		return err
	}
	slog.Info("ddblocal starting", "addr", opts.Addr, "data", opts.DataDir, "streamShards", opts.Streams.Shards, "latency", opts.Faults.Latency)
	return ddblocal.Serve(ctx, opts)
}

// ddblocalOptions reads the flags of host ddblocal.
func ddblocalOptions(args []string) (ddblocal.Options, error) {
	fs := flag.NewFlagSet("ddblocal", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8000", "listen address; must be loopback unless --allow-non-loopback")
	data := fs.String("data", "", "data directory; tables, items and streams survive a restart, every acknowledged write with its stream record (default: in memory)")
	allow := fs.Bool("allow-non-loopback", false, "allow a non-loopback --addr such as 0.0.0.0:8000 (ddblocal has no authentication: anyone who reaches it can read and change every table)")
	shards := fs.Int("stream-shards", 4, "open shards of each new stream; an item's records stay in one shard, in order")
	split := fs.Int("split-after", 0, "split a shard into two children once it has taken this many records, as a growing partition splits (0: never by itself)")
	latency := fs.Duration("latency", 0, "delay every request by this much, as a network round trip to DynamoDB would (e.g. 5ms)")
	if err := fs.Parse(args); err != nil {
		return ddblocal.Options{}, err
	}
	if *shards < 1 {
		return ddblocal.Options{}, fmt.Errorf("--stream-shards %d: a stream needs at least one shard", *shards)
	}
	if *split < 0 || *latency < 0 {
		return ddblocal.Options{}, fmt.Errorf("--split-after and --latency cannot be negative (got %d and %s)", *split, *latency)
	}
	return ddblocal.Options{Addr: *addr, DataDir: *data, AllowNonLoopback: *allow,
		Streams: ddblocal.StreamOptions{Shards: *shards, SplitAfterRecords: *split},
		Faults:  ddblocal.FaultConfig{Latency: *latency}}, nil
}
