//go:build noddblocal

package dynamotest

import (
	"context"
	"errors"
)

// startLocal is not linked under the noddblocal tag: set
// $DYNAFOLD_TEST_DDB_ENDPOINT instead.
func startLocal(context.Context) (string, func() error, error) {
	return "", nil, errors.New("built with -tags noddblocal: set " + EndpointEnv + " to a loopback DynamoDB endpoint")
}
