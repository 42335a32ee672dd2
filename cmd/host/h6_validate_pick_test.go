package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validate --config on a configuration of several projections, without
// --projection, checks the module against the one whose plugin has the
// module's name; when none has (or several have), it asks for
// --projection and lists them, where it said `no projection ""`.
func TestH6_ValidatePicksTheProjectionWhosePluginHasTheModulesName(t *testing.T) {
	t.Parallel() // prints apart (runPluginCmd); shares only the compilation cache
	config := func(projections string) string {
		p := filepath.Join(t.TempDir(), "dynafold.json")
		require.NoError(t, os.WriteFile(p, []byte(fmt.Sprintf(`{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [%s]}`, projections)), 0o644))
		return p
	}
	proj := func(name, plugin string) string {
		return fmt.Sprintf(`{"name": %q, "plugin": %q, "table": %q, "checkpoint": {"field": "version"}}`, name, plugin, name+"-rows")
	}
	v1 := v1Path(t)

	two := config(proj("ledger", "native:ledger") + "," + proj("summaries", v1))
	out, err := runPluginCmd(t, "validate", v2Path(t), "--config", two)
	require.NoError(t, err)
	assert.Contains(t, out, `replaces order-summary@1.0.0 in projection "summaries"`)

	both := config(proj("a", v1) + "," + proj("b", v1))
	_, err = runPluginCmd(t, "validate", v2Path(t), "--config", both)
	require.Error(t, err)
	assert.ErrorContains(t, err, "pass --projection")
	assert.ErrorContains(t, err, "a (plugin ")
	assert.ErrorContains(t, err, "b (plugin ")
	out, err = runPluginCmd(t, "validate", v2Path(t), "--config", both, "--projection", "b")
	require.NoError(t, err)
	assert.Contains(t, out, `in projection "b"`)

	none := config(proj("ledger", "native:ledger") + "," + proj("other", "native:other"))
	_, err = runPluginCmd(t, "validate", v2Path(t), "--config", none)
	assert.ErrorContains(t, err, `none's plugin is named "order-summary": pass --projection, one of: ledger (plugin native:ledger), other (plugin native:other)`)
	_, err = runPluginCmd(t, "validate", v2Path(t), "--config", none, "--projection", "nope")
	assert.ErrorContains(t, err, `no projection "nope"; its projections: ledger`)
}
