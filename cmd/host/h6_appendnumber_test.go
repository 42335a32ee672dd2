package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A number DynamoDB cannot store in --data is refused by append before
// anything is sent, naming the attribute and DynamoDB's limit, where the
// server's ValidationException came back wrapped in the SDK's text; the
// stream stays as it was.
func TestH6_AppendOfANumberDynamoDBCannotStoreSaysWhichAndWhy(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	for data, want := range map[string]string{
		`{"total":1e400}`: `attribute "total" is N "1e400": is larger in magnitude than DynamoDB stores`,
		`{"lines":[{"price":1.00000000000000000000000000000000000000001}]}`: `has 42 significant digits, more than DynamoDB's 38`,
	} {
		var err error
		captureStdout(t, func() {
			err = runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-n", "--type", "OrderPlaced", "--data", data})
		})
		require.Error(t, err, data)
		assert.Contains(t, err.Error(), want)
		assert.Contains(t, err.Error(), "nothing was appended")
		assert.NotContains(t, err.Error(), "TransactWriteItems", "refused before any request")
	}
	captureStdout(t, func() {
		require.NoError(t, runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-n", "--type", "OrderPlaced", "--expect", "0"}),
			"the stream is still new: nothing was appended")
	})
}
