//go:build !noddblocal

package dynamotest

import (
	"context"
	"testing"

	"github.com/dynafold/dynafold/ddblocal"
)

// startLocal starts ddblocal in-process, in memory.
func startLocal(ctx context.Context) (string, func() error, error) {
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		return "", nil, err
	}
	return srv.Endpoint(), srv.Close, nil
}

// Local starts an in-process ddblocal with opts for tests that need its own
// hooks (faults, TTL sweeps), closed when t ends. It ignores
// $DYNAFOLD_TEST_DDB_ENDPOINT.
func Local(t testing.TB, opts ddblocal.Options) *ddblocal.Server {
	t.Helper()
	srv, err := ddblocal.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("start ddblocal: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close ddblocal: %v", err)
		}
	})
	return srv
}
