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
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

func vipPath(t testing.TB) string { return wasmbuild.BuildPath(t, "../../host/testdata/ordervip") }

// appendOrdersCmd appends o-1 (customer ann, one item) and o-2 (customer
// vip) with `host append`.
func appendOrdersCmd(t *testing.T, cfgPath string) {
	for _, args := range [][]string{
		{"--stream", "Order", "--id", "o-1", "--type", "OrderPlaced", "--data", `{"customer":"ann"}`},
		{"--stream", "Order", "--id", "o-1", "--type", "ItemAdded", "--data", `{"sku":"s","price":2.5}`},
		{"--stream", "Order", "--id", "o-2", "--type", "OrderPlaced", "--data", `{"customer":"vip"}`},
	} {
		captureStdout(t, func() {
			require.NoError(t, runAppend(context.Background(), append([]string{"--config", cfgPath}, args...)))
		})
	}
}

func TestH2_CaptureWritesAnEventFileThatApplyAccepts(t *testing.T) {
	cfgPath, env, summaries := orderConfig(t)
	appendOrdersCmd(t, cfgPath)
	batch := filepath.Join(t.TempDir(), "batch.json")
	assert.Equal(t, 0, run(context.Background(), []string{"capture", "--config", cfgPath, "--stream", "Order", "--out", batch}, os.Stdout, os.Stderr))
	raw, err := os.ReadFile(batch)
	require.NoError(t, err)
	var ev struct {
		Records []struct {
			EventName string `json:"eventName"`
			DynamoDB  struct {
				NewImage       map[string]map[string]any
				SequenceNumber string
			} `json:"dynamodb"`
		}
	}
	require.NoError(t, json.Unmarshal(raw, &ev), string(raw))
	require.Len(t, ev.Records, 3, "every event of every instance")
	for _, r := range ev.Records {
		assert.Equal(t, "INSERT", r.EventName)
		assert.NotEmpty(t, r.DynamoDB.SequenceNumber)
		assert.Equal(t, map[string]any{"S": "order.event"}, r.DynamoDB.NewImage["__edd_e__"], "the event's item in DynamoDB JSON")
	}

	out := captureStdout(t, func() {
		require.NoError(t, runApply(context.Background(), []string{"--config", cfgPath, "--records", batch, "--json"}))
	})
	assert.JSONEq(t, `{"batchItemFailures": []}`, out)
	row := env.Get(t, summaries, abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")})
	assert.Equal(t, "2.5", row["total"].Str)

	// A range of one instance.
	out = captureStdout(t, func() {
		require.NoError(t, runCapture(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-1", "--from", "2"}))
	})
	require.NoError(t, json.Unmarshal([]byte(out), &ev))
	require.Len(t, ev.Records, 1)
	assert.Equal(t, map[string]any{"N": "2"}, ev.Records[0].DynamoDB.NewImage["version"])

	// From the table's stream: the records as the stream holds them.
	out = captureStdout(t, func() {
		require.NoError(t, runCapture(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-1", "--from-stream"}))
	})
	require.NoError(t, json.Unmarshal([]byte(out), &ev), out)
	require.Len(t, ev.Records, 2, "o-1's two events, not o-2's")
	assert.Equal(t, map[string]any{"N": "1"}, ev.Records[0].DynamoDB.NewImage["version"])
	assert.Equal(t, map[string]any{"N": "2"}, ev.Records[1].DynamoDB.NewImage["version"])
	assert.Less(t, ev.Records[0].DynamoDB.SequenceNumber, ev.Records[1].DynamoDB.SequenceNumber)

	assert.Equal(t, 1, run(context.Background(), []string{"capture", "--config", cfgPath}, os.Stdout, os.Stderr), "--stream is required")
	assert.Equal(t, 0, run(context.Background(), []string{"capture", "--help"}, os.Stdout, os.Stderr))
}

func TestY5_ReplayShowsTheCandidatesRowsAndTheDiffWithoutWriting(t *testing.T) {
	cfgPath, env, summaries := orderConfig(t)
	appendOrdersCmd(t, cfgPath)
	for _, id := range []string{"o-1", "o-2"} {
		captureStdout(t, func() {
			require.NoError(t, runCatchUp(context.Background(), []string{"--config", cfgPath, "--id", id}))
		})
	}
	vip := vipPath(t)
	key2 := abi.Item{"pk": abi.S("OrderSummary#o-2"), "sk": abi.S("OrderSummary")}

	wd, err := os.Getwd()
	require.NoError(t, err)
	relVip, err := filepath.Rel(wd, vip) // --plugin is relative to the working directory, not to the configuration
	require.NoError(t, err)
	out := captureStdout(t, func() {
		require.NoError(t, runWhatIf(context.Background(), []string{"--config", cfgPath, "--plugin", relVip, "--stream", "Order", "--id", "o-2"}))
	})
	assert.Contains(t, out, "row pk=OrderSummary#o-2,sk=OrderSummary: 2 attributes differ from the table")
	assert.Contains(t, out, `status: {"S":"placed"} → {"S":"placed-vip"}`)
	assert.Contains(t, out, `"status":"placed-vip"`)
	assert.Contains(t, out, "1 row, 1 differ from the table; nothing was written")
	assert.Equal(t, "placed", env.Get(t, summaries, key2)["status"].Str, "replay writes nothing")

	batch := filepath.Join(t.TempDir(), "batch.json")
	captureStdout(t, func() {
		require.NoError(t, runCapture(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--out", batch}))
	})
	out = captureStdout(t, func() {
		require.NoError(t, runWhatIf(context.Background(), []string{"--config", cfgPath, "--plugin", vip, "--events", batch, "--json"}))
	})
	var rep struct {
		Rows []struct {
			Key, Would, Current map[string]any
			Changes             []string
		}
		Differing int
		Written   bool
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Rows, 2)
	assert.Equal(t, 1, rep.Differing)
	assert.False(t, rep.Written)
	assert.Equal(t, "OrderSummary#o-1", rep.Rows[0].Key["pk"])
	assert.Empty(t, rep.Rows[0].Changes, "o-1 folds the same through the candidate")
	assert.Equal(t, 2.5, rep.Rows[0].Would["total"])
	assert.Equal(t, []string{`gsi1pk: {"S":"placed"} → {"S":"placed-vip"}`, `status: {"S":"placed"} → {"S":"placed-vip"}`}, rep.Rows[1].Changes)
	assert.Equal(t, "placed-vip", rep.Rows[1].Would["status"])
	assert.Equal(t, "placed", rep.Rows[1].Current["status"])
	assert.Equal(t, "placed", env.Get(t, summaries, key2)["status"].Str, "replay writes nothing")

	assert.Equal(t, 1, run(context.Background(), []string{"replay", "--config", cfgPath, "--stream", "Order", "--id", "o-2"}, os.Stdout, os.Stderr), "--plugin is required")
	assert.Equal(t, 0, run(context.Background(), []string{"replay", "--help"}, os.Stdout, os.Stderr))
}

func TestY2_PromoteCommandPublishesTheShadowPlugin(t *testing.T) {
	_, env, summaries := orderConfig(t)
	dir := t.TempDir()
	live, err := os.ReadFile(v1Path(t))
	require.NoError(t, err)
	vip, err := os.ReadFile(vipPath(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "orders.wasm"), live, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vip.wasm"), vip, 0o644))
	cfgPath := filepath.Join(dir, "dynafold.json")
	write := func(extra string) {
		require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{"endpoint": %q,
  "eventStore": {"table": "%s", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": %q, "checkpoint": {"field": "version"}%s}]}`,
			env.Server.Endpoint(), env.Table(t, "events", true), summaries, extra)), 0o644))
	}
	write(`, "shadow": {"plugin": "vip.wasm"}`)
	_, err = runPluginCmd(t, "promote", "--config", cfgPath)
	require.ErrorContains(t, err, "not served through hotSwap", "promote swaps through the hot-swap checks")

	write(`, "hotSwap": {"archive": "archive"}, "shadow": {"plugin": "vip.wasm"}`)
	out, err := runPluginCmd(t, "promote", "--config", cfgPath)
	require.NoError(t, err)
	assert.Contains(t, out, "projection summaries: order-summary@1.1.0")
	assert.Contains(t, out, filepath.Join(dir, "orders.wasm"))
	got, err := os.ReadFile(filepath.Join(dir, "orders.wasm"))
	require.NoError(t, err)
	assert.Equal(t, vip, got, "the live plugin file is the candidate now")
}

// `host capture --from-stream --id` keeps a record whose item does not
// decode (the record a stuck shard fails on) when its keys are those of an
// event of the range, and names the others it leaves out on stderr with
// their sequence numbers, rather than leave either out silently.
func TestH2_CaptureFromStreamKeepsTheRecordWhoseItemDoesNotDecode(t *testing.T) {
	cfgPath, env, _ := orderConfig(t)
	appendOrdersCmd(t, cfgPath)
	c, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	events := c.EventStore.Table
	for _, k := range []struct {
		id      string
		version int
	}{{"o-1", 2}, {"o-2", 1}} {
		key := abi.Item{"pk": abi.S("$shop#v1#order#" + k.id), "sk": abi.S(fmt.Sprintf("$shop#v1#order.event_1#%010d", k.version))}
		item := env.Get(t, events, key)
		require.NotNil(t, item, "%v", key)
		item["version"] = abi.S("two") // the item no longer decodes as an event
		env.Put(t, events, item)
	}

	var out string
	errOut := captureStderr(t, func() {
		out = captureStdout(t, func() {
			require.NoError(t, runCapture(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--id", "o-1", "--from-stream"}))
		})
	})
	var ev struct {
		Records []struct {
			EventName string `json:"eventName"`
			DynamoDB  struct {
				NewImage       map[string]map[string]any
				SequenceNumber string
			} `json:"dynamodb"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ev), out)
	require.Len(t, ev.Records, 3, "o-1's two events and the record of its item that does not decode")
	assert.Equal(t, "MODIFY", ev.Records[2].EventName)
	assert.Equal(t, map[string]any{"S": "two"}, ev.Records[2].DynamoDB.NewImage["version"])
	assert.Contains(t, errOut, "warning: 1 record of the table's stream left out")
	assert.Regexp(t, `sequence numbers \d+ `, errOut, "the record of o-2's item, named")
	assert.NotContains(t, errOut, ev.Records[2].DynamoDB.SequenceNumber)

	// The whole stream: both records that do not decode are of it.
	errOut = captureStderr(t, func() {
		out = captureStdout(t, func() {
			require.NoError(t, runCapture(context.Background(), []string{"--config", cfgPath, "--stream", "Order", "--from-stream"}))
		})
	})
	require.NoError(t, json.Unmarshal([]byte(out), &ev), out)
	assert.Len(t, ev.Records, 5, "three events and two records of items that do not decode")
	assert.NotContains(t, errOut, "left out")
}
