package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
)

func backfillOutput(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	oldOut, oldErr := backfillOut, backfillErr
	backfillOut, backfillErr = &out, &errOut
	defer func() { backfillOut, backfillErr = oldOut, oldErr }()
	err := runBackfill(context.Background(), args)
	return out.String(), errOut.String(), err
}

// `host backfill --to-table` rebuilds every stream into a new table with
// the Wasm plugin, prints progress lines (stderr is no terminal here), the
// watermark and the cutover steps; the printed catch-up command then
// brings in only what arrived after the watermark.
func TestX3_BackfillCommandCutsOverToANewTable(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, summaries := orderConfig(t)
	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly())
	require.NoError(t, err)
	defer h.Close(ctx)
	for i := range 5 {
		_, err := h.Append(ctx, "Order", fmt.Sprint("o-", i), 0,
			host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}},
			host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N(fmt.Sprint(i + 1))}})
		require.NoError(t, err)
	}
	time.Sleep(5 * time.Millisecond)
	out, progress, err := backfillOutput(t, "--config", cfgPath, "--segments", "3", "--to-table", "summaries-v2")
	require.NoError(t, err, out)
	assert.Contains(t, out, "backfill of summaries into summaries-v2: 5 stream instances, 5 rows written")
	assert.Contains(t, progress, "backfill: 5 stream instances to rebuild")
	assert.Contains(t, progress, "backfill: 5/5 (100%)")
	assert.Contains(t, out, fmt.Sprintf(`set the table of projection "summaries" to "summaries-v2" (it is %q)`, summaries))
	m := regexp.MustCompile(`--since (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	for i := range 5 {
		row := env.Get(t, "summaries-v2", abi.Item{"pk": abi.S(fmt.Sprint("OrderSummary#o-", i)), "sk": abi.S("OrderSummary")})
		require.NotNil(t, row)
		assert.Equal(t, fmt.Sprint(i+1), row["total"].Str)
	}
	assert.Nil(t, env.Get(t, summaries, abi.Item{"pk": abi.S("OrderSummary#o-0"), "sk": abi.S("OrderSummary")}), "the old table is untouched")

	_, err = h.Append(ctx, "Order", "o-2", 2, host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("t"), "price": abi.N("10")}})
	require.NoError(t, err)
	out, _, err = backfillOutput(t, "--config", cfgPath, "--to-table", "summaries-v2", "--since", m[1])
	require.NoError(t, err, out)
	assert.Contains(t, out, "into summaries-v2: 1 stream instance,", "only the stream with an event since the watermark")
	row := env.Get(t, "summaries-v2", abi.Item{"pk": abi.S("OrderSummary#o-2"), "sk": abi.S("OrderSummary")})
	assert.Equal(t, "13", row["total"].Str)

	_, _, err = backfillOutput(t, "--config", cfgPath, "--to-table", summaries)
	assert.ErrorContains(t, err, "is the projection's table already")
	_, _, err = backfillOutput(t, "--config", cfgPath, "--projection", "nope")
	assert.ErrorIs(t, err, host.ErrUnknownProjection)
	_, _, err = backfillOutput(t, "--config", cfgPath, "--since", "yesterday")
	assert.ErrorContains(t, err, "RFC 3339")
}

// The terminal progress bar shows the description, the count and the
// time estimate; a writer that is not a terminal gets plain lines.
func TestX3_ProgressBarShowsCountAndTimeLeft(t *testing.T) {
	var buf bytes.Buffer
	b := &bar{w: &buf}
	b.Start(4)
	b.Add(2)
	time.Sleep(150 * time.Millisecond) // past the bar's redraw throttle
	b.Add(2)
	b.Finish()
	assert.Contains(t, buf.String(), "backfill")
	assert.Contains(t, buf.String(), "4/4")
	assert.Regexp(t, `\d+s`, buf.String(), "elapsed and time left")
	_, isBar := progressFor(&buf).(*bar)
	assert.False(t, isBar, "a buffer is no terminal: plain lines")
}
