package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
)

func runDDBLocal(ctx context.Context, args []string) error {
	opts, err := ddblocalOptions(args)
	if err != nil {
		return err
	}
	slog.Info("ddblocal starting", "addr", opts.Addr, "data", opts.DataDir)
	return ddblocal.Serve(ctx, opts)
}

// ddblocalOptions parses the flags of host ddblocal.
func ddblocalOptions(args []string) (ddblocal.Options, error) {
	fs := flag.NewFlagSet("ddblocal", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8000", "listen address; must be loopback unless --allow-non-loopback")
	data := fs.String("data", "", "data directory; tables, items and streams survive a restart, every acknowledged write with its stream record (default: in memory)")
	allow := fs.Bool("allow-non-loopback", false, "allow a non-loopback --addr such as 0.0.0.0:8000 (ddblocal has no authentication: anyone who reaches it can read and change every table)")
	memMiB := fs.Int64("request-memory-mib", 512, "memory (MiB) the requests being read, decoded and served may take together; a request that does not fit waits (negative: no limit)")
	memWait := fs.Duration("request-memory-wait", 10*time.Second, "how long a request waits for request memory before it is refused with a ThrottlingException")
	if err := fs.Parse(args); err != nil {
		return ddblocal.Options{}, err
	}
	opts := ddblocal.Options{Addr: *addr, DataDir: *data, AllowNonLoopback: *allow, RequestMemoryWait: *memWait}
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
