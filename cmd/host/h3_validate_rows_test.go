package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// validate --config re-derives a sample of the table's rows with the
// candidate: a candidate that renamed a state field (order-summary 2.0.0
// keeps the customer as "buyer") is still valid, but validate names the
// attribute the stored rows hold and the candidate writes on none, and the
// rebuild to run after the swap. The serving version against its own rows
// warns of nothing.
func TestH3_ValidateWarnsOfAStoredAttributeTheCandidateNoLongerWrites(t *testing.T) {
	env := testenv.Start(t)
	events, summaries := env.Table(t, "events", true), env.Table(t, "summaries", false)
	v1 := wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm")
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1,
    "streams": [{"name": "Order", "eventTypes": ["OrderPlaced", "ItemAdded", "OrderShipped"], "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": %q, "checkpoint": {"field": "version"}, "writtenBy": "writtenBy"}]
}`, env.Server.Endpoint(), events, v1, summaries)), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	appendOrdersCmd(t, cfgPath)
	for _, id := range []string{"o-1", "o-2"} { // the rows, written by 1.0.0
		captureStdout(t, func() {
			require.NoError(t, runCatchUp(context.Background(), []string{"--config", cfgPath, "--id", id}))
		})
	}

	renamed := wasmbuild.BuildPath(t, "testdata/renamed")
	out, err := runPluginCmd(t, "validate", renamed, "--config", cfgPath)
	require.NoError(t, err, "a warning, not a refusal:\n%s", out)
	assert.Contains(t, out, renamed+": valid")
	assert.Contains(t, out, "2 sampled rows re-derived from their events by the candidate: 2 differ from the table", out)
	assert.Contains(t, out, `WARNING  attribute "customer" is in 2 of 2 sampled rows and in none of the candidate's: a renamed or dropped field?`, out)
	assert.Contains(t, out, "host rebuild --config "+cfgPath+" --written-by order-summary@1.0.0", out)
	assert.Equal(t, 1, strings.Count(out, "WARNING"), "only the dropped attribute:\n%s", out)

	// --json keeps standard output one JSON document: the warning goes to
	// standard error.
	stdout, stderr, err := runPluginCmdStderr(t, "validate", renamed, "--config", cfgPath, "--json")
	require.NoError(t, err)
	assert.NotContains(t, stdout, "WARNING")
	assert.Contains(t, stderr, `WARNING  attribute "customer"`)

	out, err = runPluginCmd(t, "validate", v1, "--config", cfgPath)
	require.NoError(t, err)
	assert.Contains(t, out, "2 sampled rows re-derived from their events by the candidate: 0 differ from the table", out)
	assert.NotContains(t, out, "WARNING", out)
}

// Without a table to read, validate --config still checks the module and
// says in one line that the rows were not checked.
func TestH3_ValidateSkipsTheRowCheckWhenTheTableCannotBeRead(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "endpoint": "http://127.0.0.1:1",
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": "rows", "checkpoint": {"field": "version"}}]}`, v1Path(t))), 0o644))
	out, err := runPluginCmd(t, "validate", v2Path(t), "--config", cfgPath)
	require.NoError(t, err, out)
	assert.Contains(t, out, `replaces order-summary@1.0.0 in projection "summaries"`)
	assert.Equal(t, 1, strings.Count(out, "rows     not checked against the table's rows ("), out)
}

// TestH3_ValidateReadsNoTableInAWSUnlessAsked: a configuration naming no
// endpoint (its tables are in AWS) is not read by validate, which stays
// offline in a build, and says how to ask for the row check.
func TestH3_ValidateReadsNoTableInAWSUnlessAsked(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
	t.Setenv("AWS_ENDPOINT_URL", "")
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": "rows", "checkpoint": {"field": "version"}}]}`, v1Path(t))), 0o644))
	out, err := runPluginCmd(t, "validate", v2Path(t), "--config", cfgPath)
	require.NoError(t, err, out)
	assert.Contains(t, out, "rows     not checked against the table's rows: the configuration names no endpoint (its tables are in AWS); add --check-rows to read them")
}
