package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
)

func runDDBLocal(ctx context.Context, args []string) error {
	opts, faultFile, err := ddblocalFlags(args)
	if err != nil {
		return err
	}
	flagRates := opts.Faults.Rates
	if faultFile != "" {
		if opts.Faults.Rates, err = faultFileRates(flagRates, faultFile); err != nil {
			return err
		}
	}
	slog.Info("ddblocal starting", "addr", opts.Addr, "data", opts.DataDir, "streamShards", opts.Streams.Shards, "latency", opts.Faults.Latency, "faults", opts.Faults.Rates,
		"kinesisDuplicates", opts.Kinesis.Faults.DuplicateRate, "kinesisReorder", opts.Kinesis.Faults.ReorderRate)
	if err := serveDDBLocal(ctx, opts, flagRates, faultFile); err != nil {
		return err
	}
	if opts.DataDir != "" {
		slog.Info("ddblocal stopped; its tables are kept in the data directory", "data", opts.DataDir)
	} else {
		slog.Info("ddblocal stopped; its tables were in memory and are gone (--data DIR keeps them)")
	}
	return nil
}

const ddblocalUsage = `usage: host ddblocal [--addr 127.0.0.1:8000] [--data DIR] [flags]

Serves ddblocal, the project's DynamoDB-compatible server (DynamoDB and
DynamoDB Streams over HTTP, AWS JSON 1.0), until interrupted (Ctrl-C). The
host, its commands, the SDKs and the AWS CLI talk to it unchanged: point
"endpoint" in dynafold.json (or AWS_ENDPOINT_URL_DYNAMODB) at
http://ADDR. Any access key is accepted. Tables live in memory unless
--data names a directory. What it implements and where it differs from
DynamoDB: docs/ddblocal.md.

Examples:
  host ddblocal                                   # http://127.0.0.1:8000, in memory
  host ddblocal --addr 127.0.0.1:8001 --data .ddb # kept across restarts
  host ddblocal --fault 'PutItem=ProvisionedThroughputExceededException:0.2' --fault '*=InternalServerError:0.01'
                                                  # rehearse throttling and 5xx
  AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x aws --endpoint-url http://127.0.0.1:8000 --region us-east-1 dynamodb list-tables

Flags:`

// serveDDBLocal serves ddblocal until ctx ends; with a fault file, each
// SIGHUP reads it again and sets the faults to flagRates (--fault) and
// the file's (an unreadable file keeps the faults as they were).
func serveDDBLocal(ctx context.Context, opts ddblocal.Options, flagRates map[string]map[string]float64, faultFile string) error {
	if faultFile == "" {
		return ddblocal.Serve(ctx, opts)
	}
	srv, err := ddblocal.Start(ctx, opts)
	if err != nil {
		return err
	}
	slog.Info("ddblocal listening; `kill -HUP` it to read --fault-file again", "endpoint", srv.Endpoint(), "data", opts.DataDir, "faultFile", faultFile, "pid", os.Getpid())
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			rates, err := faultFileRates(flagRates, faultFile)
			if err != nil {
				slog.Error("ddblocal: the fault file was not read again; the faults stay as they were", "err", err)
				continue
			}
			f := opts.Faults
			f.Rates = rates
			srv.SetFaults(f)
			slog.Info("ddblocal: faults set from the fault file", "faults", rates)
		}
	}()
	return srv.ServeUntil(ctx)
}

// faultFileRates returns base (copied) with the fault rates of file added:
// one OP=CODE:RATE a line, as --fault takes them; blank lines and lines
// starting with # are skipped.
func faultFileRates(base map[string]map[string]float64, file string) (map[string]map[string]float64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--fault-file: %w", err)
	}
	rates := map[string]map[string]float64{}
	for op, codes := range base {
		rates[op] = maps.Clone(codes)
	}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rates, err = ddblocal.ParseFaultRate(rates, line); err != nil {
			return nil, fmt.Errorf("--fault-file %s, line %d: %w", file, i+1, err)
		}
	}
	return rates, nil
}

// ddblocalOptions reads the flags of host ddblocal.
func ddblocalOptions(args []string) (ddblocal.Options, error) {
	opts, _, err := ddblocalFlags(args)
	return opts, err
}

// ddblocalFlags reads the flags of host ddblocal: the options, and the
// fault file (--fault-file) whose rates runDDBLocal adds.
func ddblocalFlags(args []string) (ddblocal.Options, string, error) {
	fs := flag.NewFlagSet("ddblocal", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), ddblocalUsage)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:8000", "listen address; must be loopback unless --allow-non-loopback")
	data := fs.String("data", "", "data directory; tables, items and streams survive a restart, every acknowledged write with its stream record (default: in memory)")
	noSync := fs.Bool("no-sync", false, "with --data: do not sync the data file after each write; a write survives ddblocal's death (even kill -9) but not the machine's (power loss, kernel crash); faster, for tests")
	allow := fs.Bool("allow-non-loopback", false, "allow a non-loopback --addr such as 0.0.0.0:8000 (ddblocal has no authentication: anyone who reaches it can read and change every table)")
	shards := fs.Int("stream-shards", 4, "open shards of each new stream; an item's records stay in one shard, in order")
	split := fs.Int("split-after", 0, "split a shard into two children once it has taken this many records, as a growing partition splits (0: never by itself)")
	latency := durationFlag(fs, "latency", 0, "delay every request by this `duration`, as a network round trip to DynamoDB would (e.g. 5ms)")
	memMiB := fs.Int64("request-memory-mib", 512, "memory (MiB) the requests being read, decoded and served may take together; a request that does not fit waits (negative: no limit)")
	memWait := durationFlag(fs, "request-memory-wait", 10*time.Second, "how long a request waits for request memory (a `duration`) before it is refused with a ThrottlingException")
	kShards := fs.Int("kinesis-shards", 4, "shards of a new on-demand Kinesis stream (or one created without a shard count)")
	kReads := fs.Int("kinesis-read-limit", 0, "GetRecords calls per second a Kinesis shard takes before it answers ProvisionedThroughputExceededException (Kinesis: 5; 0: no limit)")
	kDup := fs.Float64("kinesis-duplicates", 0, "probability (0 to 1) that a table's Kinesis streaming destination writes a change record twice, as AWS warns it may")
	kReorder := fs.Float64("kinesis-reorder", 0, "probability (0 to 1) that a table's Kinesis streaming destination holds a change record back and writes it after the next record of its shard")
	kSeed := fs.Uint64("kinesis-fault-seed", 0, "seed of the Kinesis destination's duplicate and reorder draws (repeatable runs)")
	tableDelay := durationFlag(fs, "table-delay", 0, "how long (a `duration`) a table stays CREATING, UPDATING or DELETING after CreateTable, UpdateTable or DeleteTable, as DynamoDB's tables do (e.g. 500ms; 0: at once)")
	var rates map[string]map[string]float64
	fs.Func("fault", "inject a fault, written `OP=CODE:RATE` (repeatable): requests of OP (a DynamoDB operation such as PutItem, DynamoDBStreams.GetRecords, Kinesis.GetRecords, or * for all) fail with CODE (ProvisionedThroughputExceededException, ThrottlingException, InternalServerError, ServiceUnavailable, TransactionConflictException; Unprocessed leaves BatchGetItem / BatchWriteItem elements unprocessed) with probability RATE (0 to 1); e.g. --fault 'PutItem=ProvisionedThroughputExceededException:0.2'",
		func(v string) (err error) {
			rates, err = ddblocal.ParseFaultRate(rates, v)
			return err
		})
	faultFile := fs.String("fault-file", "", "also inject the faults written in this `file`, one OP=CODE:RATE a line (# comments); a SIGHUP (kill -HUP PID) reads it again, so faults can change while ddblocal runs")
	faultSeed := fs.Int64("fault-seed", 0, "seed of --fault's draws (repeatable runs; 0: a fixed default)")
	unsigned := fs.Bool("allow-unsigned", false, "serve requests without an AWS Signature Version 4 Authorization header (DynamoDB refuses them with MissingAuthenticationTokenException; the AWS SDKs and CLI always sign, with any credentials)")
	if err := fs.Parse(args); err != nil {
		return ddblocal.Options{}, "", err
	}
	if err := flagsOnly(fs, ""); err != nil {
		return ddblocal.Options{}, "", err
	}
	if *kShards < 1 || *kReads < 0 {
		return ddblocal.Options{}, "", fmt.Errorf("--kinesis-shards %d and --kinesis-read-limit %d: a stream needs at least one shard, and the limit cannot be negative", *kShards, *kReads)
	}
	for flag, p := range map[string]float64{"--kinesis-duplicates": *kDup, "--kinesis-reorder": *kReorder} {
		if p < 0 || p > 1 {
			return ddblocal.Options{}, "", fmt.Errorf("%s %v: a probability is between 0 and 1 (e.g. 0.05)", flag, p)
		}
	}
	if *shards < 1 {
		return ddblocal.Options{}, "", fmt.Errorf("--stream-shards %d: a stream needs at least one shard", *shards)
	}
	if *split < 0 || *latency < 0 || *tableDelay < 0 {
		return ddblocal.Options{}, "", fmt.Errorf("--split-after, --latency and --table-delay cannot be negative (got %d, %s and %s)", *split, *latency, *tableDelay)
	}
	if *noSync && *data == "" {
		return ddblocal.Options{}, "", fmt.Errorf("--no-sync applies to a data directory: give --data DIR, or leave --no-sync out (without --data everything is in memory)")
	}
	opts := ddblocal.Options{Addr: *addr, DataDir: *data, NoSync: *noSync, AllowNonLoopback: *allow, RequestMemoryWait: *memWait,
		TableDelay: *tableDelay, AllowUnsigned: *unsigned,
		Streams: ddblocal.StreamOptions{Shards: *shards, SplitAfterRecords: *split},
		Faults:  ddblocal.FaultConfig{Latency: *latency, Rates: rates, Seed: *faultSeed},
		Kinesis: ddblocal.KinesisOptions{OnDemandShards: *kShards, ReadsPerShardPerSecond: *kReads,
			Faults: ddblocal.KinesisFaults{DuplicateRate: *kDup, ReorderRate: *kReorder, Seed: *kSeed}}}
	switch {
	case *memMiB < 0:
		opts.RequestMemory = -1
	case *memMiB > 0:
		opts.RequestMemory = *memMiB << 20
	}
	if *memWait <= 0 {
		opts.RequestMemoryWait = -1 // refuse at once
	}
	return opts, *faultFile, nil
}
