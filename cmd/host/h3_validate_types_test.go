package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestH3_ValidateWarnsOfAnEventTypeTheConfigurationDoesNotList: a module
// that folds an event type its stream's eventTypes leaves out passes
// validate, with a warning naming the type: `host append` would refuse
// such events, so the new version would never see one. A configuration
// listing every type (or none) gives no warning.
func TestH3_ValidateWarnsOfAnEventTypeTheConfigurationDoesNotList(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
	t.Setenv("AWS_ENDPOINT_URL", "")
	config := func(types string) string {
		path := filepath.Join(t.TempDir(), "dynafold.json")
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]%s}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": "rows", "checkpoint": {"field": "version"}}]}`, types, v1Path(t))), 0o644))
		return path
	}
	out, err := runPluginCmd(t, "validate", v2Path(t), "--config", config(`, "eventTypes": ["OrderPlaced", "ItemAdded"]`))
	require.NoError(t, err, out)
	assert.Contains(t, out, `WARNING  the module folds event type "OrderShipped", which stream "Order"'s eventTypes in the configuration does not list`)

	for _, types := range []string{``, `, "eventTypes": ["OrderPlaced", "ItemAdded", "OrderShipped", "OrderCancelled"]`} {
		out, err = runPluginCmd(t, "validate", v2Path(t), "--config", config(types))
		require.NoError(t, err, out)
		assert.NotContains(t, out, "eventTypes in the configuration does not list", types)
	}
}
