package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

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
	memMiB := fs.Int64("request-memory-mib", 512, "memory (MiB) the requests being read, decoded and served may take together; a request that does not fit waits (negative: no limit)")
	memWait := fs.Duration("request-memory-wait", 10*time.Second, "how long a request waits for request memory before it is refused with a ThrottlingException")
	tableDelay := fs.Duration("table-delay", 0, "how long a table stays CREATING, UPDATING or DELETING after CreateTable, UpdateTable or DeleteTable, as DynamoDB's tables do (e.g. 500ms; 0: at once)")
	unsigned := fs.Bool("allow-unsigned", false, "serve requests without an AWS Signature Version 4 Authorization header (DynamoDB refuses them with MissingAuthenticationTokenException; the AWS SDKs and CLI always sign, with any credentials)")
	if err := fs.Parse(args); err != nil {
		return ddblocal.Options{}, err
	}
	if *shards < 1 {
		return ddblocal.Options{}, fmt.Errorf("--stream-shards %d: a stream needs at least one shard", *shards)
	}
	if *split < 0 || *latency < 0 || *tableDelay < 0 {
		return ddblocal.Options{}, fmt.Errorf("--split-after, --latency and --table-delay cannot be negative (got %d, %s and %s)", *split, *latency, *tableDelay)
	}
	opts := ddblocal.Options{Addr: *addr, DataDir: *data, AllowNonLoopback: *allow, RequestMemoryWait: *memWait,
		TableDelay: *tableDelay, AllowUnsigned: *unsigned,
		Streams: ddblocal.StreamOptions{Shards: *shards, SplitAfterRecords: *split},
		Faults:  ddblocal.FaultConfig{Latency: *latency}}
	switch {
	case *memMiB < 0:
		opts.RequestMemory = -1
	case *memMiB > 0:
		opts.RequestMemory = *memMiB << 20
	}
	if *memWait <= 0 {
		opts.RequestMemoryWait = -1 // refuse at once
	}
	return opts, nil
}
