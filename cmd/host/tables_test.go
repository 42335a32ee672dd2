package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
)

// TestH2_TablesCreateIsIdempotentAndAppendNamesAMissingTable: on an empty
// server, appending fails naming the table and the command that creates it;
// `tables create` creates the event table (with a stream) and the read
// model; a second run changes nothing; then appending works.
func TestH2_TablesCreateIsIdempotentAndAppendNamesAMissingTable(t *testing.T) {
	srv, err := ddblocal.Start(context.Background(), ddblocal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": "shop-events", "schema": "shop", "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": "unused.wasm", "table": "order-summaries", "checkpoint": {"field": "version"}}]
}`, srv.Endpoint())), 0o644))
	appendOne := func() error {
		return runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-1", "--type", "OrderPlaced"})
	}
	err = appendOne()
	require.Error(t, err)
	assert.ErrorContains(t, err, "shop-events")
	assert.ErrorContains(t, err, "host tables create --config")

	var out bytes.Buffer
	old := tablesOut
	tablesOut = &out
	defer func() { tablesOut = old }()
	require.NoError(t, runTables(context.Background(), []string{"create", "--config", cfgPath}))
	assert.Regexp(t, `shop-events\s+event store\s+created`, out.String())
	assert.Regexp(t, `order-summaries\s+projection summaries\s+created`, out.String())
	out.Reset()
	require.NoError(t, runTables(context.Background(), []string{"create", "--config", cfgPath}))
	assert.Regexp(t, `shop-events\s+event store\s+exists\n`, out.String())
	assert.NotContains(t, out.String(), "created")

	captureStdout(t, func() { require.NoError(t, appendOne()) })
}
