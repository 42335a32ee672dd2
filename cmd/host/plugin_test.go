package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	"github.com/dynafold/dynafold/internal/wasmcache/wasmcachetest"
)

func v1Path(t testing.TB) string {
	return wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm")
}

func v2Path(t testing.TB) string { return wasmbuild.BuildPath(t, "../../host/swap/testdata/v2") }

// runPluginCmd runs `host plugin ARGS...` and returns what it printed.
func runPluginCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runPluginCmdStderr(t, args...)
	return out, err
}

// runPluginCmdStderr is runPluginCmd that also returns what the command
// printed on its standard error; commands run so print apart, and may run
// in parallel tests.
func runPluginCmdStderr(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = runPlugin(withOutput(context.Background(), &out, &errOut), args)
	return out.String(), errOut.String(), err
}

func TestW5_PrecompileFillsTheCacheAndAColdLoadUsesIt(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "wasm-cache")
	out, err := runPluginCmd(t, "precompile", "--cache", cache, v1Path(t))
	require.NoError(t, err)
	assert.Contains(t, out, "compiled into "+cache)
	var files int
	filepath.Walk(cache, func(_ string, fi os.FileInfo, _ error) error {
		if fi != nil && !fi.IsDir() {
			files++
		}
		return nil
	})
	require.Positive(t, files, "the cache directory holds compiled code")
	// A packaged cache is read by another user than the one that built it
	// (a Lambda function, a container's nonroot user).
	filepath.Walk(cache, func(p string, fi os.FileInfo, _ error) error {
		if fi != nil {
			want := os.FileMode(0o444)
			if fi.IsDir() {
				want = 0o555
			}
			assert.Equal(t, want, fi.Mode().Perm()&want, "%s is readable by every user", p)
		}
		return nil
	})
	assert.Contains(t, out, "the cache's files are made readable by every user")

	// SPEC Y6: a cold load (a new runtime) from the precompiled cache.
	wasm, err := os.ReadFile(v1Path(t))
	require.NoError(t, err)
	ctx := context.Background()
	// Served from the cache, not compiled: a compile would add its code
	// there. (How fast that is lives in BenchmarkColdStart.)
	before := wasmcachetest.Snapshot(t, cache)
	p, err := plugin.Load(ctx, wasm, plugin.Config{CacheDir: cache})
	require.NoError(t, err)
	require.NoError(t, p.Close(ctx))
	assert.Equal(t, before, wasmcachetest.Snapshot(t, cache), "SPEC Y6: the cold load used the precompiled code")

	_, err = runPluginCmd(t, "precompile", v1Path(t))
	assert.ErrorContains(t, err, "--cache is required")
}

func TestH3_ValidateCommandPrintsDescribe(t *testing.T) {
	t.Parallel() // prints apart (runPluginCmd); shares only the compilation cache
	out, err := runPluginCmd(t, "validate", v2Path(t), "--json")
	require.NoError(t, err)
	var v validation
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.Equal(t, "order-summary", v.Name)
	assert.Equal(t, "2.0.0", v.Version)
	assert.Equal(t, fmt.Sprintf("%d.%d", abi.VersionMajor, abi.VersionMinor), v.ABI)
	assert.Equal(t, "passed", v.SelfTest)
	require.Len(t, v.Sources, 1)
	assert.Equal(t, "Order", v.Sources[0].Stream)
	assert.Len(t, v.SHA256, 64)

	out, err = runPluginCmd(t, "validate", v1Path(t))
	require.NoError(t, err)
	assert.Contains(t, out, "plugin   order-summary@1.0.0")
	assert.Contains(t, out, "selftest absent")

	// Against a configuration: can it replace the projection's plugin?
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": "rows", "checkpoint": {"field": "version"}}]}`, v1Path(t))), 0o644))
	out, err = runPluginCmd(t, "validate", v2Path(t), "--config", cfgPath)
	require.NoError(t, err)
	assert.Contains(t, out, `replaces order-summary@1.0.0 in projection "summaries"`)
	_, err = runPluginCmd(t, "validate", wasmbuild.BuildPath(t, "../../host/swap/testdata/wrongstream"), "--config", cfgPath)
	assert.ErrorIs(t, err, swap.ErrIncompatible)
	assert.ErrorContains(t, err, `reads stream "Invoice"`)

	_, err = runPluginCmd(t, "validate", wasmbuild.BuildPath(t, "../../host/swap/testdata/badabi"))
	assert.ErrorIs(t, err, plugin.ErrABIVersion)
	_, err = runPluginCmd(t, "validate", wasmbuild.BuildPath(t, "../../host/swap/testdata/v2trap"))
	assert.ErrorIs(t, err, plugin.ErrTrap, "a trapping self_test fails validation")
}

const fixtureEvents = `[
 {"stream": "Order", "streamId": "o-1", "version": 2, "type": "ItemAdded", "data": {"sku": {"S": "a"}, "price": {"N": "2.5"}}},
 {"stream": "Order", "streamId": "o-1", "version": 1, "type": "OrderPlaced", "data": {"customer": {"S": "c-42"}}},
 {"stream": "Order", "streamId": "o-2", "version": 1, "type": "OrderPlaced", "data": {"customer": {"S": "c-7"}}}
]`

func TestH3_PluginTestCommandComparesRows(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events.json")
	require.NoError(t, os.WriteFile(events, []byte(fixtureEvents), 0o644))
	// Without --expect, the rows are printed: they make the expected file.
	out, err := runPluginCmd(t, "test", v1Path(t), "--events", events)
	require.NoError(t, err)
	rows, err := swap.ParseRows([]byte(out))
	require.NoError(t, err, out)
	require.Len(t, rows, 2)
	assert.Equal(t, "OrderSummary#o-1", rows[0]["pk"].Str)
	assert.Equal(t, "1", rows[0]["items"].Str)
	assert.Equal(t, "c-7", rows[1]["customer"].Str)
	expect := filepath.Join(dir, "rows.json")
	require.NoError(t, os.WriteFile(expect, []byte(out), 0o644))

	out, err = runPluginCmd(t, "test", v1Path(t), "--events", events, "--expect", expect)
	require.NoError(t, err)
	assert.Contains(t, out, "ok order-summary@1.0.0: 3 events, 2 rows as expected")

	// Version 2 writes model = 2: the same fixture fails, naming the difference.
	out, err = runPluginCmd(t, "test", v2Path(t), "--events", events, "--expect", expect)
	assert.ErrorIs(t, err, errTestFailed)
	assert.Contains(t, out, `FAIL row pk=OrderSummary#o-1,sk=OrderSummary: model = {"N":"2"} not expected`)
}

func TestH3_RollbackCommandRestoresThePreviousS3Version(t *testing.T) {
	ctx := context.Background()
	ts := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	defer ts.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	client, err := swap.NewS3Client(ctx, ts.URL, "")
	require.NoError(t, err)
	_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plugins")})
	require.NoError(t, err)
	_, err = client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("plugins"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
	require.NoError(t, err)
	v1, err := os.ReadFile(v1Path(t))
	require.NoError(t, err)
	v2, err := os.ReadFile(v2Path(t))
	require.NoError(t, err)
	for _, b := range [][]byte{v1, v2} {
		_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("plugins"), Key: aws.String("o.wasm"), Body: bytes.NewReader(b)})
		require.NoError(t, err)
	}
	out, err := runPluginCmd(t, "rollback", "--s3", "s3://plugins/o.wasm", "--endpoint", ts.URL)
	require.NoError(t, err)
	assert.Contains(t, out, "is current again")
	got, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("plugins"), Key: aws.String("o.wasm")})
	require.NoError(t, err)
	b, err := io.ReadAll(got.Body)
	got.Body.Close()
	require.NoError(t, err)
	assert.True(t, bytes.Equal(b, v1), "the current object is version 1 again")

	_, err = runPluginCmd(t, "rollback")
	assert.ErrorContains(t, err, "name the plugin's source")
}

// TestY3_RebuildWrittenByRebuildsTheRowsOfAnOldVersion writes rows with
// order-summary 1.0.0, moves the configuration to 2.0.0 (which writes
// model = 2), writes one more row, and rebuilds the rows 1.0.0 wrote: they
// are rewritten by 2.0.0, and the row 2.0.0 wrote is left alone.
func TestY3_RebuildWrittenByRebuildsTheRowsOfAnOldVersion(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	events, summaries := env.Table(t, "events", true), env.Table(t, "summaries", false)
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	dir := t.TempDir()
	writeConfig := func(pluginPath string) string {
		cfg := fmt.Sprintf(`{"endpoint": %q,
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": %q, "checkpoint": {"field": "version"}, "writtenBy": "writtenBy"}]}`,
			env.Server.Endpoint(), events, pluginPath, summaries)
		p := filepath.Join(dir, "dynafold.json")
		require.NoError(t, os.WriteFile(p, []byte(cfg), 0o644))
		return p
	}
	apply1 := func(cfgPath string, ids ...string) {
		c, err := host.LoadConfig(cfgPath)
		require.NoError(t, err)
		h, err := host.New(ctx, c)
		require.NoError(t, err)
		defer h.Close(ctx)
		for _, id := range ids {
			evs, err := h.Append(ctx, "Order", id, 0,
				host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}},
				host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("1")}})
			require.NoError(t, err)
			res, err := h.ApplyEvents(ctx, "summaries", evs...)
			require.NoError(t, err)
			require.Len(t, res.Rows, 1)
			require.NoError(t, res.Rows[0].Err)
		}
	}
	row := func(id string) abi.Item {
		it := env.Get(t, summaries, abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary")})
		require.NotNil(t, it, id)
		return it
	}
	apply1(writeConfig(v1Path(t)), "o-1", "o-2")
	cfgPath := writeConfig(v2Path(t))
	apply1(cfgPath, "o-3")
	require.Equal(t, "order-summary@1.0.0", row("o-1")["writtenBy"].Str)
	require.Equal(t, "order-summary@2.0.0", row("o-3")["writtenBy"].Str)
	created3 := row("o-3")["createdAt"]

	var out bytes.Buffer
	octx := withOutput(ctx, &out, os.Stderr) // the rebuild's output
	rebuild := commandNamed(t, "rebuild")
	require.NoError(t, rebuild(octx, []string{"--config", cfgPath, "--written-by", "1.0.0"}))
	t.Log(out.String())
	assert.Contains(t, out.String(), "2 rows of "+summaries+" written by order-summary@1.0.0")
	assert.Contains(t, out.String(), "row pk=OrderSummary#o-1,sk=OrderSummary: changed")
	assert.Contains(t, out.String(), "2 stream instances rebuilt: 2 rows, 0 created, 2 changed, 0 unchanged, 0 removed, 0 failed")
	for _, id := range []string{"o-1", "o-2"} {
		it := row(id)
		assert.Equal(t, "order-summary@2.0.0", it["writtenBy"].Str, id)
		assert.Equal(t, "2", it["model"].Str, id)
		assert.Equal(t, "1", it["items"].Str, id)
		assert.Equal(t, "2", it["version"].Str, id)
	}
	assert.True(t, created3.Equal(row("o-3")["createdAt"]))
	err := rebuild(octx, []string{"--config", cfgPath, "--written-by", "1.0.0"})
	require.NoError(t, err)
	assert.Contains(t, out.String(), "0 rows of "+summaries+" written by order-summary@1.0.0")
	// --json: the report, each row with what its rebuild did, the counts.
	apply1(writeConfig(v1Path(t)), "o-5")
	cfgPath = writeConfig(v2Path(t))
	out.Reset()
	require.NoError(t, rebuild(octx, []string{"--config", cfgPath, "--written-by", "1.0.0", "--json"}))
	var rep struct {
		RowsWrittenBy int            `json:"rowsWrittenBy"`
		Streams       []string       `json:"streams"`
		Summary       map[string]int `json:"summary"`
		Rows          []struct {
			Key    map[string]any `json:"key"`
			Change string         `json:"change"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	assert.Equal(t, 1, rep.RowsWrittenBy)
	assert.Equal(t, []string{"o-5"}, rep.Streams)
	assert.Equal(t, map[string]int{"created": 0, "changed": 1, "unchanged": 0, "removed": 0, "failed": 0}, rep.Summary)
	require.Len(t, rep.Rows, 1)
	assert.Equal(t, "changed", rep.Rows[0].Change)
	assert.Equal(t, "OrderSummary#o-5", rep.Rows[0].Key["pk"])
	// Without --written-by, rebuild needs a stream instance.
	err = rebuild(octx, []string{"--config", cfgPath})
	assert.ErrorContains(t, err, "--id (a stream instance), --written-by (plugin versions) or --not-written-by (a plugin version) is required")
}

// TestY3_RebuildTakesSeveralVersionsOrEveryRowButTheServingOnes: after
// several swaps --written-by takes the old versions as one list, and
// --not-written-by with the version serving finds every row an older
// version left without naming them (it took one version, so a user had to
// learn and list each in turn, and a forgotten one stayed stale).
func TestY3_RebuildTakesSeveralVersionsOrEveryRowButTheServingOnes(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, summaries := writtenByOrders(t)
	// Rows as three older versions left them, and one of the serving
	// version's.
	c, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, c)
	require.NoError(t, err)
	for id, by := range map[string]string{"o-1": "order-summary@1.0.0", "o-2": "order-summary@1.0.2", "o-3": "order-summary@1.1.0", "o-4": "order-summary@2.0.0"} {
		_, err := h.Append(ctx, "Order", id, 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}})
		require.NoError(t, err)
		env.Put(t, summaries, abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary"), "version": abi.N("1"), "writtenBy": abi.S(by)})
	}
	h.Close(ctx)
	var out bytes.Buffer
	octx := withOutput(ctx, &out, os.Stderr)
	rebuild := commandNamed(t, "rebuild")

	require.NoError(t, rebuild(octx, []string{"--config", cfgPath, "--written-by", "1.0.0,order-summary@1.0.2", "--dry-run"}))
	assert.Contains(t, out.String(), "2 rows of "+summaries+" written by order-summary@1.0.0, order-summary@1.0.2 (or folded on what one of them wrote)")
	assert.Contains(t, out.String(), "would rebuild o-1\n")
	assert.Contains(t, out.String(), "would rebuild o-2\n")
	assert.NotContains(t, out.String(), "o-3")

	out.Reset()
	require.NoError(t, rebuild(octx, []string{"--config", cfgPath, "--not-written-by", "2.0.0"}))
	assert.Contains(t, out.String(), "3 rows of "+summaries+" not written by order-summary@2.0.0 alone")
	assert.Contains(t, out.String(), "3 stream instances rebuilt: 3 rows")
	assert.NotContains(t, out.String(), "o-4", "the serving version's row")
	for _, id := range []string{"o-1", "o-2", "o-3", "o-4"} {
		assert.Equal(t, "order-summary@2.0.0", env.Get(t, summaries, abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary")})["writtenBy"].Str, id)
	}
	out.Reset()
	require.NoError(t, rebuild(octx, []string{"--config", cfgPath, "--not-written-by", "2.0.0"}))
	assert.Contains(t, out.String(), "0 rows of "+summaries+" not written by order-summary@2.0.0 alone")

	err = rebuild(octx, []string{"--config", cfgPath, "--written-by", "1.0.0", "--not-written-by", "2.0.0"})
	assert.ErrorContains(t, err, "give one")
	err = rebuild(octx, []string{"--config", cfgPath, "--written-by", "1.0.0,"})
	assert.ErrorContains(t, err, "an empty plugin version in the list")
}

func commandNamed(t *testing.T, name string) func(context.Context, []string) error {
	for _, c := range commands {
		if c.name == name {
			return c.run
		}
	}
	t.Fatalf("no command %q", name)
	return nil
}

// TestH3_ValidateWithConfigRunsTheConfiguredSmokeTestAndPins: validate
// --config refuses what the running host's pipeline would refuse: a module
// without self_test whose rows the configured fixture does not expect, and
// a module whose digest is not pinned.
func TestH3_ValidateWithConfigRunsTheConfiguredSmokeTestAndPins(t *testing.T) {
	fixture, err := filepath.Abs("../../host/swap/testdata/fixture")
	require.NoError(t, err)
	write := func(hotSwap string) string {
		p := filepath.Join(t.TempDir(), "dynafold.json")
		require.NoError(t, os.WriteFile(p, []byte(fmt.Sprintf(`{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": "rows", "checkpoint": {"field": "version"}, "hotSwap": %s}]}`, v1Path(t), hotSwap)), 0o644))
		return p
	}
	expectsV2 := write(fmt.Sprintf(`{"watch": true, "fixture": {"events": %q, "rows": %q}}`,
		filepath.Join(fixture, "events.json"), filepath.Join(fixture, "rows-v2.json")))
	_, err = runPluginCmd(t, "validate", v1Path(t), "--config", expectsV2)
	assert.ErrorIs(t, err, swap.ErrSmokeTest, "1.0.0 writes no model; the fixture expects model 2")
	assert.ErrorContains(t, err, `would be refused in projection "summaries"`)
	assert.ErrorContains(t, err, `model missing, want {"N":"2"}`)
	out, err := runPluginCmd(t, "validate", v2Path(t), "--config", expectsV2)
	require.NoError(t, err, "2.0.0's self_test passes, so the fixture is not needed")
	assert.Contains(t, out, `replaces order-summary@1.0.0`)

	pinned := write(fmt.Sprintf(`{"watch": true, "sha256": [%q]}`, strings.Repeat("ab", 32)))
	_, err = runPluginCmd(t, "validate", v2Path(t), "--config", pinned)
	assert.ErrorIs(t, err, swap.ErrPinMismatch)
}

// TestH3_PluginTestCommandFailsWhenARowFails: without --expect, a row whose
// fold fails is not hidden behind exit 0; the other rows are still printed.
func TestH3_PluginTestCommandFailsWhenARowFails(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events.json")
	require.NoError(t, os.WriteFile(events, []byte(`[
 {"stream": "Order", "streamId": "o-1", "version": 1, "type": "OrderPlaced", "data": {"customer": {"S": "c-42"}}},
 {"stream": "Order", "streamId": "o-2", "version": 1, "type": "OrderRefunded", "data": {}}
]`), 0o644))
	out, err := runPluginCmd(t, "test", v1Path(t), "--events", events)
	require.ErrorContains(t, err, "a row failed to fold")
	assert.Contains(t, out, "OrderSummary#o-1", "the row that folded is printed")
}
