package main

import (
	"context"
	"flag"
	"log/slog"

	"github.com/dynafold/dynafold/ddblocal"
)

func runDDBLocal(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("ddblocal", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8000", "listen address; must be loopback unless --allow-non-loopback")
	data := fs.String("data", "", "data directory; tables, items and streams survive a restart, every acknowledged write with its stream record (default: in memory)")
	allow := fs.Bool("allow-non-loopback", false, "allow a non-loopback --addr such as 0.0.0.0:8000 (ddblocal has no authentication: anyone who reaches it can read and change every table)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	slog.Info("ddblocal starting", "addr", *addr, "data", *data)
	return ddblocal.Serve(ctx, ddblocal.Options{Addr: *addr, DataDir: *data, AllowNonLoopback: *allow})
}
