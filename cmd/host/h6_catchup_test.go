package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// zoneConfig writes a configuration for the zone-readings plugin (one
// sensor stream feeds a row per zone) against a fresh ddblocal.
func zoneConfig(t *testing.T) (string, *testenv.Env, string) {
	env := testenv.Start(t)
	events, zones := env.Table(t, "events", true), env.Table(t, "zones", false)
	cfg := fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": %q, "schema": "iot", "schemaVersion": 1,
    "streams": [{"name": "Sensor", "eventTypes": ["SensorPlaced", "SensorReading"], "composite": ["sensorId"]}]},
  "projections": [{"name": "zones", "plugin": %q, "table": %q, "checkpoint": {"field": "seq"}}]
}`, env.Server.Endpoint(), events, wasmbuild.BuildPath(t, "../../plugins/examples/zone-readings/wasm"), zones)
	path := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	return path, env, zones
}

func appendAll(t *testing.T, cfgPath string, events ...[]string) {
	t.Helper()
	for _, args := range events {
		captureStdout(t, func() {
			require.NoError(t, runAppend(context.Background(), append([]string{"--config", cfgPath}, args...)))
		})
	}
}

// A stream that feeds two rows: catchup --id brings both up, not only the
// row of the stream's latest event (a row left behind by a record given up
// stayed behind), and an up-to-date row prints its real checkpoint.
func TestP11_CatchUpByIDBringsUpEveryRowTheStreamFeeds(t *testing.T) {
	cfgPath, env, zones := zoneConfig(t)
	appendAll(t, cfgPath,
		[]string{"--stream", "Sensor", "--id", "s-1", "--type", "SensorPlaced", "--data", `{"zone":"north"}`},
		[]string{"--stream", "Sensor", "--id", "s-1", "--type", "SensorReading", "--data", `{"zone":"north","celsius":21.5}`},
		[]string{"--stream", "Sensor", "--id", "s-1", "--type", "SensorPlaced", "--data", `{"zone":"south"}`},
	)
	north := abi.Item{"pk": abi.S("ZoneReading#s-1"), "sk": abi.S("north")}
	south := abi.Item{"pk": abi.S("ZoneReading#s-1"), "sk": abi.S("south")}

	out := captureStdout(t, func() {
		require.NoError(t, runCatchUp(context.Background(), []string{"--config", cfgPath, "--id", "s-1"}))
	})
	assert.Contains(t, out, "row pk=ZoneReading#s-1,sk=north: applied 2 events, checkpoint 2, written true", out)
	assert.Contains(t, out, "row pk=ZoneReading#s-1,sk=south: applied 1 event, checkpoint 3, written true", out)
	assert.Equal(t, "1", env.Get(t, zones, north)["readings"].Str, "the row of an earlier event is caught up too")
	assert.NotNil(t, env.Get(t, zones, south))

	// Both rows up to date: nothing applied, nothing written, and the
	// checkpoint each row holds, in text and in JSON.
	out = captureStdout(t, func() {
		require.NoError(t, runCatchUp(context.Background(), []string{"--config", cfgPath, "--id", "s-1"}))
	})
	assert.Contains(t, out, "row pk=ZoneReading#s-1,sk=north: applied 0 events, checkpoint 2, written false", out)
	assert.Contains(t, out, "row pk=ZoneReading#s-1,sk=south: applied 0 events, checkpoint 3, written false", out)
	assert.Contains(t, out, "written false\n  {", "each row's line is followed by the row as it is")
	assert.Contains(t, out, `"readings":{"N":"1"}`, out)
	out = captureStdout(t, func() {
		require.NoError(t, runCatchUp(context.Background(), []string{"--config", cfgPath, "--id", "s-1", "--json"}))
	})
	var doc struct {
		Rows []struct {
			Key        map[string]any
			Written    bool
			Checkpoint uint64
			Row        map[string]any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	require.Len(t, doc.Rows, 2, out)
	for i, want := range []uint64{2, 3} { // north, south: the row's own checkpoint attribute
		assert.False(t, doc.Rows[i].Written)
		assert.Equal(t, want, doc.Rows[i].Checkpoint, "%v", doc.Rows[i].Row)
		assert.EqualValues(t, want, doc.Rows[i].Row["seq"])
	}
}

// A stream id that has no events is an error that says so, for catchup
// and rebuild alike; rebuild printed nothing and exited 0.
func TestH6_RebuildAndCatchUpOfAnUnknownIDSayWhatIsWrong(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	for _, run := range []func(context.Context, []string) error{runRebuild, runCatchUp} {
		var err error
		out := captureStdout(t, func() {
			err = run(context.Background(), []string{"--config", cfgPath, "--id", "does-not-exist"})
		})
		require.Error(t, err, "exit 1, not 0")
		assert.Empty(t, out)
		assert.Contains(t, err.Error(), `stream Order has no event with id "does-not-exist"`)
		assert.Contains(t, err.Error(), "check --id")
	}
}
