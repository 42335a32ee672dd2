package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
)

// `host row` prints a row as the table holds it and applies nothing: an
// event appended since the last catch-up is not in what it prints, and
// the row is the same afterwards; a row never written is absent.
func TestP11_RowPrintsARowAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, summaries := orderConfig(t)
	appendEv := func(typ, data string) {
		captureStdout(t, func() {
			require.NoError(t, runAppend(ctx, []string{"--config", cfgPath, "--stream", "Order", "--id", "o-5", "--type", typ, "--data", data}))
		})
	}
	appendEv("OrderPlaced", `{"customer":"bo"}`)
	byKey := []string{"--config", cfgPath, "--row", `{"pk": "OrderSummary#o-5", "sk": "OrderSummary"}`}
	out := captureStdout(t, func() { require.NoError(t, runRow(ctx, byKey)) })
	assert.Contains(t, out, "row pk=OrderSummary#o-5,sk=OrderSummary: absent")

	appendEv("ItemAdded", `{"sku":"s","price":2.5}`)
	captureStdout(t, func() { require.NoError(t, runCatchUp(ctx, []string{"--config", cfgPath, "--id", "o-5"})) })
	appendEv("ItemAdded", `{"sku":"t","price":4}`) // not applied by anyone
	before := env.Get(t, summaries, summaryKey("o-5"))

	for _, args := range [][]string{byKey, {"--config", cfgPath, "--id", "o-5"}} {
		out = captureStdout(t, func() { require.NoError(t, runRow(ctx, args)) })
		assert.Contains(t, out, "row pk=OrderSummary#o-5,sk=OrderSummary:\n")
		assert.Contains(t, out, `"total":{"N":"2.5"}`, "as stored, without the event appended since")
	}
	assert.Equal(t, before, env.Get(t, summaries, summaryKey("o-5")), "nothing written")

	err := runRow(ctx, []string{"--config", cfgPath})
	assert.ErrorContains(t, err, "--row")
}

// `host row --id` finds rows through the stream instance's events; when one
// of them does not decode, it fails naming the item, and says to give the
// row by its key, which still prints it.
func TestP11_RowByIdWithAnEventThatDoesNotDecodeSaysToUseTheKey(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, _ := orderConfig(t)
	captureStdout(t, func() {
		require.NoError(t, runAppend(ctx, []string{"--config", cfgPath, "--stream", "Order", "--id", "o-6", "--type", "OrderPlaced", "--data", `{"customer":"bo"}`}))
		require.NoError(t, runCatchUp(ctx, []string{"--config", cfgPath, "--id", "o-6"}))
	})
	raw, err := os.ReadFile(cfgPath)
	require.NoError(t, err)
	var cfg struct {
		EventStore struct{ Table string } `json:"eventStore"`
	}
	require.NoError(t, json.Unmarshal(raw, &cfg))
	key := abi.Item{"pk": abi.S("$shop#v1#order#o-6"), "sk": abi.S("$shop#v1#order.event_1#0000000001")}
	item := env.Get(t, cfg.EventStore.Table, key)
	require.NotNil(t, item)
	item["version"] = abi.S("1") // a hand edit: the version as a string
	env.Put(t, cfg.EventStore.Table, item)

	err = runRow(ctx, []string{"--config", cfgPath, "--id", "o-6"})
	require.Error(t, err)
	assert.ErrorContains(t, err, "does not decode")
	assert.ErrorContains(t, err, "give the row by its key instead: host row --row")
	out := captureStdout(t, func() {
		require.NoError(t, runRow(ctx, []string{"--config", cfgPath, "--row", `{"pk": "OrderSummary#o-6", "sk": "OrderSummary"}`}))
	})
	assert.Contains(t, out, "row pk=OrderSummary#o-6,sk=OrderSummary:\n")
}
