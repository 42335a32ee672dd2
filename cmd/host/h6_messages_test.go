package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
)

// captureStderr returns what f wrote to os.Stderr (flag sets print their
// usage there).
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stderr = old }()
	f()
	w.Close()
	os.Stderr = old
	return <-done
}

func TestH6_AppendDataMustBeAnObjectAndSaysSo(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	for data, want := range map[string]string{
		`[1,2]`:      `[1,2] is an array, not an object: give the attributes by name, e.g. '{"items": [1,2]}'`,
		`"ann"`:      `is a string, not an object`,
		`{"a": 1`:    `not JSON`,
		`{"a":1} {}`: `more than one JSON value`,
	} {
		err := runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-1", "--type", "OrderPlaced", "--data", data})
		require.Error(t, err, data)
		assert.Contains(t, err.Error(), want, data)
		assert.NotContains(t, err.Error(), "Go value", data)
	}
}

func TestH6_AppendConflictNamesTheHead(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	appendAll(t, cfgPath,
		[]string{"--stream", "Order", "--id", "o-1", "--type", "OrderPlaced", "--data", `{"customer":"ann"}`},
		[]string{"--stream", "Order", "--id", "o-1", "--type", "ItemAdded", "--data", `{"sku":"s","price":1}`, "--expect", "1"},
	)
	err := runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-1", "--type", "OrderShipped", "--expect", "0"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, host.ErrVersionConflict), "%v", err)
	assert.Contains(t, err.Error(), "expected version 0 is not the head: the stream's head is 2; append with --expect 2")
	err = runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-1", "--type", "OrderShipped", "--expect", "-1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--expect "-1": want a version, 0 or more`)
}

// closedEndpoint returns the URL of a loopback port nothing listens on
// (held until the test ends, see testenv.ClosedAddr).
func closedEndpoint(t *testing.T) (string, string) {
	addr, _ := testenv.ClosedAddr(t)
	return "http://" + addr, addr
}

// With the endpoint down, the commands say which endpoint did not answer
// and what to do, not the SDK's retry summary alone.
func TestH6_UnreachableEndpointSaysWhichAndWhatToDo(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	b, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	endpoint, addr := closedEndpoint(t)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(b, &cfg))
	cfg["endpoint"] = endpoint
	down := filepath.Join(t.TempDir(), "down.json")
	out, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(down, out, 0o644))

	for name, run := range map[string]func() error{
		"append": func() error {
			return runAppend(context.Background(), []string{"--config", down, "--stream", "Order", "--id", "o-1", "--type", "OrderPlaced"})
		},
		"catchup":       func() error { return runCatchUp(context.Background(), []string{"--config", down, "--id", "o-1"}) },
		"tables create": func() error { return runTables(context.Background(), []string{"create", "--config", down}) },
	} {
		var err error
		captureStdout(t, func() { err = run() })
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, host.ErrEndpointUnreachable), "%s: %v", name, err)
		for _, want := range []string{"nothing answered at " + endpoint, "connection refused", "is ddblocal running?",
			"host ddblocal --addr " + addr, `"endpoint" in the configuration`, "AWS_ENDPOINT_URL_DYNAMODB is read only when the configuration names no endpoint"} {
			assert.Contains(t, err.Error(), want, name)
		}
		assert.NotContains(t, err.Error(), "exceeded maximum number of attempts", name)
	}
}

func TestH6_HelpOfAppendAndDDBLocalSaysWhatTheyDo(t *testing.T) {
	for cmd, wants := range map[string][]string{
		"append": {"Appends one event to a stream", "docs/EVENTS.md", "Examples:", "--expect N the append succeeds only if the stream's head is N", "absent: append at the head"},
		"ddblocal": {"DynamoDB-compatible server", "until interrupted", `point
"endpoint" in dynafold.json`, "docs/ddblocal.md", "Examples:"},
		// the fixture format, where it said only "see host/swap.Fixture"
		"plugin test": {"EVENTS.json is a JSON array of events", `"timestamp": "2026-01-01T00:00:00Z"`, "default 2026-01-01T00:00:00Z",
			"ROWS.json is a JSON array of items in DynamoDB JSON", "--decisions prints what became of each event", "rejected"},
		"catchup":         {"--id brings every row the stream instance feeds up to the stream's head", "A row already up to date", "is not written"},
		"plugin validate": {"A module is valid only once its self test has passed", "plugins.callTimeout"},
	} {
		out := captureStderr(t, func() {
			var stdout, stderr strings.Builder
			assert.Equal(t, 0, run(context.Background(), append(strings.Fields(cmd), "--help"), &stdout, &stderr))
		})
		for _, want := range wants {
			assert.Contains(t, out, want, cmd)
		}
		assert.NotContains(t, out, "(default -1)", cmd)
		assert.NotContains(t, out, "see host/swap", cmd)
		assert.NotContains(t, out, fmt.Sprintf("Usage of %s:", cmd), cmd)
	}
}

// TestH6_AppendAtTheHeadSurvivesConcurrentAppends: without --expect an
// append goes at the head whatever it is, so appenders racing on one
// stream all land (a lost race reads the head again), each at its own
// version.
func TestH6_AppendAtTheHeadSurvivesConcurrentAppends(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	appendAll(t, cfgPath, []string{"--stream", "Order", "--id", "o-race", "--type", "OrderPlaced", "--data", `{"customer":"ann"}`})
	const n = 12
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- runAppend(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-race",
				"--type", "ItemAdded", "--data", fmt.Sprintf(`{"sku":"s%d","price":1}`, i)})
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(context.Background(), cfg, host.WithEventStoreOnly())
	require.NoError(t, err)
	defer h.Close(context.Background())
	head, err := h.Head(context.Background(), "Order", "o-race")
	require.NoError(t, err)
	assert.EqualValues(t, n+1, head, "every racing append landed at a version of its own")
}

// A command whose DynamoDB request was throttled on every attempt adds, below
// its error, what that means and what to do: an operator rehearsing
// throttling got the SDK's retry summary from `host status` and nothing
// saying that it passes on its own.
func TestH6_ACommandThrottledOnEveryAttemptSaysWhatThatMeans(t *testing.T) {
	cfgPath, env, _ := orderConfig(t)
	env.Server.SetFaults(ddblocal.FaultConfig{Rates: map[string]map[string]float64{"*": {"ProvisionedThroughputExceededException": 1}}})
	var stdout, stderr strings.Builder
	code := run(context.Background(), []string{"row", "--config", cfgPath, "--id", "o-1"}, &stdout, &stderr)
	assert.NotZero(t, code)
	assert.Contains(t, stderr.String(), "ProvisionedThroughputExceededException")
	assert.Contains(t, stderr.String(), "DynamoDB throttled")
	assert.Contains(t, stderr.String(), "it passes on its own once the load falls")
}
