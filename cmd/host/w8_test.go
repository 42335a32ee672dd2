package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// The case 3: order-summary whose to_item returns qty =
// {"N": "not-a-number"} (with self tests that expect it), and one whose
// to_item returns another row's pk (no self test).
const badOutput = "../../host/swap/testdata/badoutput"

// TestW8_ValidateRefusesAModuleWhoseOutputCannotBeWritten: `host plugin
// validate` refuses the module whose self test folds a number DynamoDB
// cannot store, and, with --config, the module whose to_item returns
// another key at the configured smoke test, even though the fixture's rows
// are what it returns; each error names the attribute and the problem.
func TestW8_ValidateRefusesAModuleWhoseOutputCannotBeWritten(t *testing.T) {
	t.Parallel() // prints apart (runPluginCmd); shares only the compilation cache
	out, err := runPluginCmd(t, "validate", wasmbuild.BuildPath(t, filepath.Join(badOutput, "badnumber")))
	t.Log(out)
	require.Error(t, err)
	assert.ErrorContains(t, err, `to_item returned attribute "qty" that is N "not-a-number": is not a number DynamoDB can store`)

	fixture, err := filepath.Abs("../../host/swap/testdata")
	require.NoError(t, err)
	cfg := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": "rows", "checkpoint": {"field": "version"},
    "hotSwap": {"watch": true, "fixture": {"events": %q, "rows": %q}}}]}`,
		v1Path(t), filepath.Join(fixture, "fixture", "events.json"), filepath.Join(fixture, "badoutput", "rows-otherkey.json"))), 0o644))
	_, err = runPluginCmd(t, "validate", wasmbuild.BuildPath(t, filepath.Join(badOutput, "otherkey")), "--config", cfg)
	require.Error(t, err)
	assert.ErrorIs(t, err, swap.ErrSmokeTest)
	assert.ErrorContains(t, err, `to_item returned attribute "pk" that is S "OrderSummary#someone-else", but it is a key attribute and the row's key holds S "OrderSummary#o-1"`)
}

// TestW8_PluginTestRefusesOutputThatCannotBeWritten: `host plugin test`
// no longer prints a row DynamoDB would refuse: with --expect the rows its
// author expects are reported failed, naming the attribute; without, the
// command fails and prints no such row.
func TestW8_PluginTestRefusesOutputThatCannotBeWritten(t *testing.T) {
	mod := wasmbuild.BuildPath(t, filepath.Join(badOutput, "badnumber"))
	events := "../../host/swap/testdata/fixture/events.json"
	out, err := runPluginCmd(t, "test", mod, "--events", events, "--expect", filepath.Join(badOutput, "rows-badnumber.json"))
	t.Log(out)
	require.ErrorIs(t, err, errTestFailed)
	assert.Contains(t, out, `FAIL row pk=OrderSummary#o-1,sk=OrderSummary: failed: plugin order-summary@1.0.1, projection "order-summary", event Order o-1 v3 (ItemAdded): to_item returned attribute "qty"`)

	out, err = runPluginCmd(t, "test", mod, "--events", events)
	require.ErrorContains(t, err, "a row failed to fold")
	assert.NotContains(t, out, "not-a-number", "no row DynamoDB would refuse is printed")
}
