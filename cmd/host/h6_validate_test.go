package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// A module whose self test traps is refused, never called valid first,
// and the trap is printed once (it was printed in the report and again as
// the error).
func TestH6_ValidateRefusesAFailingSelfTestWithoutCallingItValid(t *testing.T) {
	path := wasmbuild.BuildPath(t, "../../host/swap/testdata/v2trap")
	out, err := runPluginCmd(t, "validate", path)
	require.Error(t, err)
	assert.ErrorIs(t, err, plugin.ErrTrap)
	assert.NotContains(t, out, ": valid", out)
	assert.Contains(t, out, path+": REFUSED: its self test failed")
	assert.Contains(t, out, "selftest FAILED (the error follows)")
	all := out + err.Error()
	assert.Equal(t, 1, strings.Count(all, "nil pointer dereference"), "the trap is told once:\n%s\n%v", out, err)
	assert.NotContains(t, err.Error(), "\n", "one line")
	assert.NotContains(t, err.Error(), "self_test: plugin", "self_test named once")

	out, err = runPluginCmd(t, "validate", path, "--json")
	require.Error(t, err)
	assert.Contains(t, out, `"selfTest": "plugin order-summary@2.0.0: self_test: trap: unreachable`)
	assert.Equal(t, path+" was refused: its self test failed (selfTest in the report above)", err.Error())
}

// validate --config loads the module in the configuration's sandbox: its
// plugins.callTimeout bounds a self test that never returns, and the error
// names where the timeout came from; --timeout given wins, and is named.
func TestH6_ValidateUsesTheConfigurationsCallTimeoutAndNamesItsSource(t *testing.T) {
	t.Parallel() // prints apart (runPluginCmd); shares only the compilation cache
	path := wasmbuild.BuildPath(t, "../../host/swap/testdata/v2loop")
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "plugins": {"callTimeout": "600ms"},
  "projections": [{"name": "summaries", "plugin": %q, "table": "rows", "checkpoint": {"field": "version"}}]}`, v1Path(t))), 0o644))

	_, err := runPluginCmd(t, "validate", path, "--config", cfgPath)
	require.Error(t, err)
	assert.ErrorIs(t, err, plugin.ErrTimeout)
	assert.Contains(t, err.Error(), "timeout after 600ms (plugins.callTimeout of "+cfgPath+")")

	_, err = runPluginCmd(t, "validate", path, "--config", cfgPath, "--timeout", "300ms")
	require.Error(t, err)
	assert.ErrorIs(t, err, plugin.ErrTimeout)
	assert.Contains(t, err.Error(), "timeout after 300ms (--timeout)")
	assert.NotContains(t, err.Error(), "plugins.callTimeout")
}
