package conformance

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/dynafold/dynafold/ddblocal"
)

// This file links ddblocal in, so that without DDB_CONFORMANCE_ENDPOINT the
// suite runs against an in-process server.

func init() {
	startLocal = func(ctx context.Context) (string, localServer, func() error, error) {
		// The background TTL sweeper is off: tests sweep explicitly.
		srv, err := ddblocal.Start(ctx, ddblocal.Options{TTLInterval: -1, Logger: quietLogger()})
		if err != nil {
			return "", nil, nil, fmt.Errorf("ddblocal.Start: %w", err)
		}
		return srv.Endpoint(), localAdapter{srv}, srv.Close, nil
	}
}

type localAdapter struct{ srv *ddblocal.Server }

func (a localAdapter) SweepTTL(ctx context.Context) error {
	_, err := a.srv.SweepTTL(ctx)
	return err
}

func quietLogger() *slog.Logger {
	return slog.New(slog.DiscardHandler)
}

// startOwnLocal starts a private ddblocal with opts for a test that needs
// options the shared server lacks; it skips unless the suite runs in-process.
func startOwnLocal(t testing.TB, opts ddblocal.Options) *ddblocal.Server {
	t.Helper()
	requireLocal(t, "server options")
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	srv, err := ddblocal.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("ddblocal.Start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}
