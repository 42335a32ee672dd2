package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/testenv"
)

// verifyRun runs `host <args>` as main does and returns its exit status,
// what it printed (findings and summary) and its progress and errors.
func verifyRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	oldOut, oldErr := verifyOut, verifyErr
	verifyOut, verifyErr = &out, &errOut
	defer func() { verifyOut, verifyErr = oldOut, oldErr }()
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// jsonLines parses one JSON object per line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "line %q", l)
		lines = append(lines, m)
	}
	return lines
}

// cachedOrderConfig is orderConfig with a compilation cache (the one this
// package's tests share), so that each command loads the plugin at once.
func cachedOrderConfig(t *testing.T) (string, *testenv.Env, string) {
	t.Helper()
	cfgPath, env, summaries := orderConfig(t)
	editConfig(t, cfgPath, func(cfg map[string]any) {
		cfg["plugins"] = map[string]any{"cacheDir": testCacheDir}
	})
	return cfgPath, env, summaries
}

// editConfig rewrites the configuration file at path through edit.
func editConfig(t *testing.T, path string, edit func(cfg map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(raw, &cfg))
	edit(cfg)
	raw, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o644))
}

// orders appends n orders an hour ago (older than any grace) through
// the order-summary configuration, and backfills their rows.
func orders(t *testing.T, cfgPath string, n int) {
	t.Helper()
	ctx := context.Background()
	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, cfg, host.WithEventStoreOnly(), host.WithClock(func() time.Time { return time.Now().Add(-time.Hour) }))
	require.NoError(t, err)
	defer h.Close(ctx)
	for i := range n {
		_, err := h.Append(ctx, "Order", fmt.Sprint("o-", i), 0,
			host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}},
			host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N(fmt.Sprint(i + 1))}})
		require.NoError(t, err)
	}
	_, _, err = backfillOutput(t, "--config", cfgPath)
	require.NoError(t, err)
}

func summaryKey(id string) abi.Item {
	return abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary")}
}

// `host verify` on the order-summary Wasm plugin: exit 0 without drift;
// each kind of finding made behind the host's back as one JSON line with
// its kind, projection, key (strings) and details, then the summary, exit
// 1; --repair rebuilds all but the orphan (exit 1 for it), and exit 0 once
// it is gone; options that cannot work exit 2.
func TestV1_VerifyCommandReportsDriftAsJSONLinesAndExitCodes(t *testing.T) {
	cfgPath, env, summaries := cachedOrderConfig(t)
	orders(t, cfgPath, 5)

	code, out, _ := verifyRun(t, "verify", "--config", cfgPath, "--json")
	require.Equal(t, 0, code, out)
	lines := jsonLines(t, out)
	require.Len(t, lines, 1)
	assert.Equal(t, "summary", lines[0]["kind"])
	assert.EqualValues(t, 5, lines[0]["rows"])
	assert.EqualValues(t, 10, lines[0]["events"])

	row := env.Get(t, summaries, summaryKey("o-1"))
	row["total"] = abi.N("99")
	env.Put(t, summaries, row)
	deleteRow(t, env, summaries, summaryKey("o-2"))
	env.Put(t, summaries, abi.Item{"pk": abi.S("OrderSummary#ghost"), "sk": abi.S("OrderSummary"), "total": abi.N("1")})
	row = env.Get(t, summaries, summaryKey("o-3"))
	row["version"] = abi.N("8")
	env.Put(t, summaries, row)

	code, out, _ = verifyRun(t, "verify", "--config", cfgPath, "--json", "--segments", "3")
	require.Equal(t, 1, code, out)
	lines = jsonLines(t, out)
	require.Len(t, lines, 5, out)
	byKind := map[string]map[string]any{}
	for _, l := range lines[:4] {
		byKind[l["kind"].(string)] = l
		assert.Equal(t, "summaries", l["projection"])
	}
	d := byKind["differs"]
	assert.Equal(t, map[string]any{"pk": "OrderSummary#o-1", "sk": "OrderSummary"}, d["key"])
	assert.Equal(t, []any{map[string]any{"path": "total", "stored": map[string]any{"N": "99"}, "fold": map[string]any{"N": "2"}}}, d["diffs"])
	assert.Equal(t, map[string]any{"pk": "OrderSummary#o-2", "sk": "OrderSummary"}, byKind["missing"]["key"])
	assert.Equal(t, map[string]any{"N": "3"}, byKind["missing"]["fold"].(map[string]any)["total"])
	assert.Equal(t, map[string]any{"pk": "OrderSummary#ghost", "sk": "OrderSummary"}, byKind["orphan"]["key"])
	assert.Equal(t, []any{map[string]any{"instance": "Order#o-3", "checkpoint": 8.0, "head": 2.0}}, byKind["ahead"]["ahead"])
	sum := lines[4]
	assert.Equal(t, "summary", sum["kind"])
	for k, want := range map[string]float64{"rows": 5, "differs": 1, "missing": 1, "orphan": 1, "ahead": 1, "pending": 0, "unrepaired": 4} {
		assert.Equal(t, want, sum[k], k)
	}

	code, out, progress := verifyRun(t, "verify", "--config", cfgPath, "--repair")
	require.Equal(t, 1, code, "the orphan is left: %s", out)
	assert.Contains(t, progress, "verify: 6 rows to check")
	assert.Contains(t, out, `differs  summaries {"pk":"OrderSummary#o-1","sk":"OrderSummary"}`)
	assert.Contains(t, out, `    total: stored {"N":"99"}, events make {"N":"2"}`)
	assert.Contains(t, out, `    checkpoint of Order#o-3 is v8, its stream's head is v2`)
	assert.Contains(t, out, "    repaired: rebuilt from its events and checked again")
	assert.Contains(t, out, `orphan   summaries {"pk":"OrderSummary#ghost","sk":"OrderSummary"}: no event addresses it`)
	assert.Contains(t, out, "3 repaired")
	assert.Equal(t, "2", env.Get(t, summaries, summaryKey("o-3"))["version"].Str)

	code, out, _ = verifyRun(t, "verify", "--config", cfgPath, "--json")
	require.Equal(t, 1, code, out)
	lines = jsonLines(t, out)
	require.Len(t, lines, 2, out)
	assert.Equal(t, "orphan", lines[0]["kind"])
	deleteRow(t, env, summaries, abi.Item{"pk": abi.S("OrderSummary#ghost"), "sk": abi.S("OrderSummary")})
	code, out, _ = verifyRun(t, "verify", "--config", cfgPath)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "no drift")

	for _, args := range [][]string{
		{"--projection", "nope"},
		{"--sample", "2"},
		{"--grace", "-1s"},
		{"extra"},
	} {
		code, _, stderr := verifyRun(t, append([]string{"verify", "--config", cfgPath}, args...)...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.NotEmpty(t, stderr, "%v says why", args)
	}
	code, _, stderr := verifyRun(t, "verify", "--config", filepath.Join(t.TempDir(), "none.json"))
	assert.Equal(t, 2, code, stderr)
}

// Before a cutover: `host backfill --to-table` builds the new table, and
// `host verify` on a configuration naming it checks it row by row.
func TestV1_VerifyValidatesABackfilledTableBeforeACutover(t *testing.T) {
	cfgPath, env, _ := cachedOrderConfig(t)
	orders(t, cfgPath, 4)
	_, _, err := backfillOutput(t, "--config", cfgPath, "--to-table", "summaries-v2")
	require.NoError(t, err)

	code, out, _ := verifyRun(t, "verify", "--config", cfgPath, "--table", "summaries-v2")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "verify summaries (table summaries-v2): 4 rows and 8 events read: 0 differs, 0 missing, 0 orphan, 0 ahead")

	deleteRow(t, env, "summaries-v2", summaryKey("o-0"))
	code, out, _ = verifyRun(t, "verify", "--config", cfgPath, "--projection", "summaries", "--table", "summaries-v2")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, `missing  summaries {"pk":"OrderSummary#o-0","sk":"OrderSummary"}`)

	code, _, stderr := verifyRun(t, "verify", "--config", cfgPath, "--table", "no-such-table")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no-such-table")
}

func deleteRow(t *testing.T, env *testenv.Env, table string, key abi.Item) {
	t.Helper()
	k, err := ddbclient.ToAttributeMap(key)
	require.NoError(t, err)
	_, err = env.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: &table, Key: k})
	require.NoError(t, err)
}

// `host status` lists the last sampled verification pass of each
// projection and names a drift with the command that lists its rows.
func TestV1_StatusPrintsTheLastVerificationPass(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	f := sidecar.Fleet{LeaseTable: "leases", At: at, Verify: []sidecar.FleetVerify{
		{Projection: "summaries", Worker: "w1", At: at.Add(-30 * time.Second), Sample: 0.01, Rows: 40, Differs: 2, Pending: 1},
		{Projection: "zones", Worker: "w2", At: at.Add(-time.Minute), Sample: 0.01, Rows: 12},
	}}
	var out bytes.Buffer
	require.NoError(t, printFleet(&out, f))
	s := out.String()
	assert.Regexp(t, `VERIFIED\s+LAST PASS\s+BY\s+SAMPLE\s+ROWS\s+DIFFERS\s+MISSING\s+ORPHAN\s+AHEAD\s+PENDING\s+ERRORS`, s)
	assert.Regexp(t, `summaries\s+30s ago\s+w1\s+0.01\s+40\s+2\s+0\s+0\s+0\s+1\s+0`, s)
	assert.Regexp(t, `zones\s+1m0s ago\s+w2\s+0.01\s+12\s+0`, s)
	assert.Contains(t, s, "drift in summaries: 2 rows of the last sample; run `host verify --projection summaries` to list every row, and --repair to rebuild all but orphans")
	assert.NotContains(t, s, "drift in zones")

	js := fleetJSONOf(f)
	require.Len(t, js.Verify, 2)
	assert.Equal(t, int64(2), js.Verify[0].Differs)
}

// A verification that could not check everything never says "no drift":
// with the read-model table missing, and with a row whose events no longer
// fold, the summary says how many could not be checked and that the read
// model is not verified, and the exit status is 2. The row's error says
// what verify did (nothing written), not what a rebuild does.
func TestV1_VerifySaysNotVerifiedWhenRowsCouldNotBeChecked(t *testing.T) {
	cfgPath, _, _ := cachedOrderConfig(t)
	orders(t, cfgPath, 3)

	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(context.Background(), cfg, host.WithEventStoreOnly(), host.WithClock(func() time.Time { return time.Now().Add(-time.Hour) }))
	require.NoError(t, err)
	_, err = h.Append(context.Background(), "Order", "o-1", 2, host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.S("lots")}})
	require.NoError(t, err)
	h.Close(context.Background())

	code, out, stderr := verifyRun(t, "verify", "--config", cfgPath)
	assert.Equal(t, 2, code, "%s\n%s", out, stderr)
	assert.NotContains(t, out, "no drift")
	assert.Contains(t, out, "1 could not be checked")
	assert.Contains(t, out, "not verified, in ")
	assert.Contains(t, out, "1 row could not be checked (see each above; the rows checked agree with their events)")
	assert.Contains(t, out, "instance Order#o-1 failed to fold, so the row cannot be re-derived")
	assert.NotContains(t, out, "a rebuild re-derives")
	assert.Contains(t, out+stderr, "projection summaries: row pk=OrderSummary#o-1,sk=OrderSummary: instance Order#o-1 failed to fold")
	assert.NotContains(t, out+stderr, `projection "summaries" row pk=OrderSummary#o-1,sk=OrderSummary: projection summaries: row`, "the projection and row named once")
	assert.Contains(t, stderr, "1 row could not be checked, so the read model is not verified")

	code, out, _ = verifyRun(t, "verify", "--config", cfgPath, "--json")
	assert.Equal(t, 2, code, out)
	lines := jsonLines(t, out)
	assert.Equal(t, false, lines[len(lines)-1]["verified"], out)

	editConfig(t, cfgPath, func(cfg map[string]any) {
		cfg["projections"].([]any)[0].(map[string]any)["table"] = "no-such-table"
	})
	code, out, stderr = verifyRun(t, "verify", "--config", cfgPath)
	assert.Equal(t, 2, code, "%s\n%s", out, stderr)
	assert.NotContains(t, out, "no drift")
	assert.Regexp(t, `not verified, in \S+: the verification stopped before every row was checked`, out)
	assert.Contains(t, stderr, "no-such-table")
}
