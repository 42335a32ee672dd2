package main

import (
	"context"
	"flag"
	"log/slog"

	"github.com/dynafold/dynafold/ddblocal"
)

func runDDBLocal(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("ddblocal", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8000", "listen address (loopback)")
	data := fs.String("data", "", "data directory; tables, items and streams survive a restart (default: in memory)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	slog.Info("ddblocal serving", "endpoint", "http://"+*addr, "data", *data)
	return ddblocal.Serve(ctx, ddblocal.Options{Addr: *addr, DataDir: *data})
}
