package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
