package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestH2_CatchUpAndRebuildPrintRowsAsJSON checks that the commands that
// print rows print JSON, never Go values, and their exit codes.
func TestH2_CatchUpAndRebuildPrintRowsAsJSON(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	appendOrdersCmd(t, cfgPath)
	var rep struct {
		Rows []struct {
			Key        map[string]any
			Written    bool
			Applied    int
			Checkpoint uint64
			Row        map[string]any
		}
	}
	out := captureStdout(t, func() {
		assert.Equal(t, 0, run(context.Background(), []string{"catchup", "--config", cfgPath, "--id", "o-1", "--json"}, os.Stdout, os.Stderr))
	})
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Rows, 1)
	r := rep.Rows[0]
	assert.Equal(t, map[string]any{"pk": "OrderSummary#o-1", "sk": "OrderSummary"}, r.Key)
	assert.True(t, r.Written)
	assert.Equal(t, 2, r.Applied)
	assert.Equal(t, uint64(2), r.Checkpoint)
	assert.Equal(t, 2.5, r.Row["total"], "numbers are JSON numbers")
	assert.Equal(t, "ann", r.Row["customer"])
	assert.Equal(t, 2.0, r.Row["version"])

	out = captureStdout(t, func() {
		assert.Equal(t, 0, run(context.Background(), []string{"rebuild", "--config", cfgPath, "--id", "o-2", "--json"}, os.Stdout, os.Stderr))
	})
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Rows, 1)
	assert.Equal(t, "vip", rep.Rows[0].Row["customer"])
	assert.Equal(t, "placed", rep.Rows[0].Row["status"])

	// Exit codes: a failed command 1, an unknown one 2, help 0.
	assert.Equal(t, 1, run(context.Background(), []string{"catchup", "--config", cfgPath}, os.Stdout, os.Stderr), "--id is missing")
	assert.Equal(t, 1, run(context.Background(), []string{"apply", "--config", cfgPath, "--records", "no-such-file.json"}, os.Stdout, os.Stderr))
	assert.Equal(t, 2, run(context.Background(), []string{"no-such-command"}, os.Stdout, os.Stderr))
	assert.Equal(t, 0, run(context.Background(), []string{"catchup", "--help"}, os.Stdout, os.Stderr))
}
