//go:build !noddblocal

package dynamotest

import (
	"context"

	"github.com/dynafold/dynafold/internal/ddblocal"
)

// startLocal starts ddblocal in-process, in memory.
func startLocal(ctx context.Context) (string, func() error, error) {
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		return "", nil, err
	}
	return srv.Endpoint(), srv.Close, nil
}
