package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynafold/dynafold/internal/syncbuf"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testenv"
)

// TestC3_RunBinaryFoldsTheFeedSwapsThePluginAndStopsCleanlyOnSIGTERM runs
// `host run` as a built binary against a ddblocal started by the test.
func TestC3_RunBinaryFoldsTheFeedSwapsThePluginAndStopsCleanlyOnSIGTERM(t *testing.T) {
	bin := hostBinary(t)
	env := testenv.Start(t, func(o *ddblocal.Options) { o.Streams.ShardMaxRecords = 6 })
	dir := t.TempDir()
	v1, err := os.ReadFile(v1Path(t))
	require.NoError(t, err)
	v2, err := os.ReadFile(v2Path(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "orders.wasm"), v1, 0o644))
	cfgPath := filepath.Join(dir, "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "plugins": {"cacheDir": %q},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": "summaries", "checkpoint": {"field": "version"},
    "writtenBy": "writtenBy", "hotSwap": {"watch": true, "settle": "10ms"}}],
  "sidecar": {"leaseTable": "leases", "pollInterval": "20ms", "leaseDuration": "1s", "batchSize": 5}
}`, env.Server.Endpoint(), testCacheDir)), 0o644))
	creds := append(os.Environ(), "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x")
	tables := exec.Command(bin, "tables", "create", "--config", cfgPath)
	tables.Env = creds
	out, err := tables.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `leases\s+sidecar leases\s+created`, string(out))

	var stderr syncbuf.Buffer
	cmd := exec.Command(bin, "run", "--config", cfgPath, "--worker-id", "e2e", "--progress-interval", "500ms", "--admin-addr", "127.0.0.1:0")
	cmd.Env, cmd.Stderr = creds, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	ctx := context.Background()
	es, err := host.New(ctx, cfg, host.WithEventStoreOnly(), host.WithClient(env.Client))
	require.NoError(t, err)
	defer es.Close(ctx)
	place := func(id string) {
		_, err := es.Append(ctx, "Order", id, 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}},
			host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("2.50")}})
		require.NoError(t, err)
	}
	row := func(id string) abi.Item {
		return env.Get(t, "summaries", abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary")})
	}
	waitRow := func(id string, ok func(abi.Item) bool) abi.Item {
		deadline := time.Now().Add(60 * time.Second)
		for {
			if it := row(id); it != nil && ok(it) {
				return it
			}
			if time.Now().After(deadline) {
				t.Fatalf("row of %s: %v; stderr:\n%s", id, row(id), stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for i := 0; i < 5; i++ {
		place(fmt.Sprintf("o-%d", i))
	}
	for i := 0; i < 5; i++ {
		it := waitRow(fmt.Sprintf("o-%d", i), func(it abi.Item) bool { return it["version"].Str == "2" })
		assert.Equal(t, "order-summary@1.0.0", it["writtenBy"].Str)
	}

	// hot swap while it runs: new orders are folded by 2.0.0
	tmp := filepath.Join(dir, ".orders.wasm.tmp")
	require.NoError(t, os.WriteFile(tmp, v2, 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "orders.wasm")))
	var swapped abi.Item
	for i := 0; swapped == nil; i++ {
		id := fmt.Sprintf("after-%d", i)
		place(id)
		it := waitRow(id, func(it abi.Item) bool { return it["version"].Str == "2" })
		if it["writtenBy"].Str == "order-summary@2.0.0" {
			swapped = it
		}
		require.Less(t, i, 300, "the plugin was never swapped in; stderr:\n%s", stderr.String())
	}
	assert.Equal(t, "2", swapped["model"].Str, "2.0.0's behaviour")

	// the admin server: metrics of what it read and folded, ready
	adminURL := adminURLFromLogs(t, stderr.String())
	metrics := httpGet(t, adminURL+"/metrics")
	assert.Contains(t, metrics, "dynafold_records_read_total")
	assert.Regexp(t, `dynafold_rows_written_total\{projection="summaries"\} [1-9]`, metrics)
	assert.Contains(t, metrics, "dynafold_plugin_call_duration_seconds_bucket")
	assert.Equal(t, "ready\n", httpGet(t, adminURL+"/readyz"))

	// a progress line (every 500 ms) before the stop: a run served from the
	// compilation cache may fold all of the above in less
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(stderr.String(), "records/s"); {
		require.True(t, time.Now().Before(deadline), "no progress line in 30 s; stderr:\n%s", stderr.String())
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "exit 0 after SIGTERM; stderr:\n%s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit 30 s after SIGTERM; stderr:\n%s", stderr.String())
	}
	logs := stderr.String()
	assert.Contains(t, logs, "records/s done; since start ", "the interval's rate, then the counts since start")
	assert.Contains(t, logs, "leases released")
	assert.Contains(t, logs, `"level":"INFO"`, "JSON logs when stderr is not a terminal")

	scan, err := env.Client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("leases"), ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	shards, err := env.Server.StreamShards(ctx, "events")
	require.NoError(t, err)
	require.Greater(t, len(shards), 4, "the stream rolled over")
	require.Len(t, scan.Items, len(shards), "a lease per shard")
	byID := map[string]ddblocal.StreamShard{}
	for _, sh := range shards {
		byID[sh.ShardID] = sh
	}
	for _, it := range scan.Items {
		assert.NotContains(t, it, "leaseOwner", "released")
		sh := byID[it["leaseKey"].(*types.AttributeValueMemberS).Value]
		ck := it["checkpoint"].(*types.AttributeValueMemberS).Value
		switch {
		case !sh.Open():
			assert.Equal(t, "SHARD_END", ck, "the closed shard %s is finished", sh.ShardID)
		case sh.Records > 0:
			assert.True(t, strings.Trim(ck, "0123456789") == "", "the open shard %s's checkpoint %q is a sequence number", sh.ShardID, ck)
		}
	}
}

func TestC3_RunHelpHasAnExampleAndAConfigWithoutSidecarIsRefused(t *testing.T) {
	var help bytes.Buffer
	old := runErr
	runErr = &help
	defer func() { runErr = old }()
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"run", "--help"}, &out, &errOut))
	assert.Contains(t, help.String(), "Example:")
	assert.Contains(t, help.String(), "--worker-id")
	assert.Contains(t, help.String(), "leaseTable")

	cfgPath, _, _ := orderConfig(t)
	out.Reset()
	errOut.Reset()
	require.Equal(t, 1, run(context.Background(), []string{"run", "--config", cfgPath}, &out, &errOut))
	assert.Contains(t, errOut.String(), `no "sidecar" section`)
	assert.Contains(t, errOut.String(), "host tables create")
}

// adminURLFromLogs finds the admin server's URL in host run's JSON log.
func adminURLFromLogs(t *testing.T, logs string) string {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		var rec struct {
			Msg string `json:"msg"`
			URL string `json:"url"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "admin server listening" {
			return rec.URL
		}
	}
	t.Fatalf("no \"admin server listening\" line in the log:\n%s", logs)
	return ""
}

// httpGet returns the body of a 200 response to GET url.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %s", url, b)
	return string(b)
}

// The progress line names the stream it reads by its name: a DynamoDB
// stream by its table, a Kinesis data stream by its name, not its ARN.
func TestC6_ProgressLineNamesTheStreamNotItsARN(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:dynamodb:us-east-1:000000000000:table/events/stream/2026-12-05T00:00:00.000": "lag events 0s",
		"arn:aws:kinesis:us-east-1:000000000000:stream/cart-changes":                          "lag kinesis cart-changes 0s",
	} {
		var b strings.Builder
		printProgress(&b, sidecar.Stats{StreamArn: arn, Shards: 1}, sidecar.Stats{}, time.Second)
		if !strings.Contains(b.String(), want) || strings.Contains(b.String(), "arn:") {
			t.Errorf("%s: %q, want %q", arn, b.String(), want)
		}
	}
}

// While lease rounds fail, the progress line's lag is as of the last read:
// a line below it says so (an operator's trial saw "lag 0s" through a
// two-minute outage).
func TestC6_ProgressSaysWhenNoLeaseRoundSucceeds(t *testing.T) {
	now := time.Now()
	assert.Empty(t, leaseNote(time.Time{}, 30*time.Second, now), "before the first round")
	assert.Empty(t, leaseNote(now.Add(-10*time.Second), 30*time.Second, now))
	assert.Equal(t, "no lease round has succeeded for 1m30s: the lag above is as of the last read (the log says why the rounds fail)",
		leaseNote(now.Add(-90*time.Second), 30*time.Second, now))
}

// While a shard waits behind a record that keeps failing, the progress
// line says so, next to the lag `host status` shows, and its rate is of
// records done (an operator's trial read "13.2 records/s ... lag 0s"
// while no record was folded and the shard was minutes behind).
func TestC6_ProgressLineSaysAShardIsHeldBackByAFailingRecord(t *testing.T) {
	arn := "arn:aws:kinesis:us-east-1:000000000000:stream/cart-feed"
	var b strings.Builder
	printProgress(&b, sidecar.Stats{StreamArn: arn, Records: 10, Failures: 14, Shards: 4, Behind: 3*time.Minute + 36*time.Second, HeldBack: 1},
		sidecar.Stats{Records: 10}, time.Second)
	assert.Equal(t, "host run: 0.0 records/s done; since start 0 rows written, 14 failures, 0 given up; 4 shards held, lag kinesis cart-feed 3m36s; 1 shard held back by a failing record (the log says why)\n", b.String())
	b.Reset()
	printProgress(&b, sidecar.Stats{StreamArn: arn, Records: 20, Shards: 4}, sidecar.Stats{Records: 10}, time.Second)
	assert.NotContains(t, b.String(), "held back")
	assert.Contains(t, b.String(), "10.0 records/s done")
	// no shard held (another worker's, or the lease table throttled): the
	// lag is not 0s but unknown here
	b.Reset()
	printProgress(&b, sidecar.Stats{StreamArn: arn, Records: 20}, sidecar.Stats{Records: 20}, time.Second)
	assert.Contains(t, b.String(), "0 shards held, lag kinesis cart-feed unknown here (no shard held: `host status` shows every shard's)")
}
