package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testenv"
)

// TestK2_RunBinaryReadsKinesisStreamWithDuplicatesAndReordering runs two
// `host run` binaries on the Kinesis data stream `host tables create` set
// up as the event table's streaming destination, with ddblocal writing
// duplicates and reordering changes; a shard is split while they run.
// Every row ends at its order's head; a SIGTERM stops both cleanly.
func TestK2_RunBinaryReadsKinesisStreamWithDuplicatesAndReordering(t *testing.T) {
	bin := hostBinary(t)
	env := testenv.Start(t, func(o *ddblocal.Options) {
		o.Kinesis = ddblocal.KinesisOptions{OnDemandShards: 4, Faults: ddblocal.KinesisFaults{DuplicateRate: 0.3, ReorderRate: 0.3, Seed: 25}}
	})
	dir := t.TempDir()
	wasm, err := os.ReadFile(v1Path(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "orders.wasm"), wasm, 0o644))
	cfgPath := filepath.Join(dir, "dynafold.json")
	// no kinesis endpoint: a loopback DynamoDB endpoint (ddblocal) serves Kinesis too
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "plugins": {"cacheDir": %q},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": "summaries", "checkpoint": {"field": "version"}}],
  "sidecar": {"leaseTable": "leases", "pollInterval": "20ms", "leaseDuration": "1s", "batchSize": 5,
    "kinesis": {"stream": "order-changes"}}
}`, env.Server.Endpoint(), testCacheDir)), 0o644))
	creds := append(os.Environ(), "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "AWS_ENDPOINT_URL_KINESIS=")
	tables := exec.Command(bin, "tables", "create", "--config", cfgPath)
	tables.Env = creds
	out, err := tables.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "order-changes")

	type proc struct {
		cmd    *exec.Cmd
		stderr *syncbuf.Buffer
		exited chan error
	}
	var procs []*proc
	for _, w := range []string{"k1", "k2"} {
		p := &proc{stderr: &syncbuf.Buffer{}, exited: make(chan error, 1)}
		p.cmd = exec.Command(bin, "run", "--config", cfgPath, "--worker-id", w, "--progress-interval", "500ms")
		p.cmd.Env, p.cmd.Stderr = creds, p.stderr
		require.NoError(t, p.cmd.Start())
		go func() { p.exited <- p.cmd.Wait() }()
		t.Cleanup(func() {
			if p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		})
		procs = append(procs, p)
	}
	logs := func() string {
		var b strings.Builder
		for _, p := range procs {
			b.WriteString(p.stderr.String())
		}
		return b.String()
	}

	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	ctx := context.Background()
	es, err := host.New(ctx, cfg, host.WithEventStoreOnly(), host.WithClient(env.Client))
	require.NoError(t, err)
	defer es.Close(ctx)
	heads := map[string]int{}
	add := func(id string, first bool) {
		evs := []host.NewEvent{{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("2.50")}}}
		if first {
			evs = append([]host.NewEvent{{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}}}, evs...)
		}
		_, err := es.Append(ctx, "Order", id, uint64(heads[id]), evs...)
		require.NoError(t, err)
		heads[id] += len(evs)
	}
	const orders = 12
	for i := 0; i < orders; i++ {
		add(fmt.Sprintf("o-%d", i), true)
	}
	shards, err := env.Server.KinesisShards(ctx, "order-changes")
	require.NoError(t, err)
	_, err = env.Server.SplitKinesisShard(ctx, "order-changes", shards[0].ShardID)
	require.NoError(t, err)
	for i := 0; i < orders; i++ {
		add(fmt.Sprintf("o-%d", i), false)
	}
	shards, err = env.Server.KinesisShards(ctx, "order-changes")
	require.NoError(t, err)
	for i := 0; i < orders; i++ {
		id := fmt.Sprintf("o-%d", i)
		want := fmt.Sprint(heads[id])
		deadline := time.Now().Add(time.Minute)
		for {
			it := env.Get(t, "summaries", abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary")})
			if it != nil && it["version"].Str == want {
				assert.Equal(t, "2", it["items"].Str, "order %s: both items once, duplicates or not", id)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("row of %s: %v, want version %s; logs:\n%s", id, it, want, logs())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// host status reads the fleet on the Kinesis stream: the split shard finished, its children listed
	status := exec.Command(bin, "status", "--config", cfgPath)
	status.Env = creds
	sout, _ := status.CombinedOutput()
	assert.Contains(t, string(sout), "stream arn:aws:kinesis:")
	assert.Regexp(t, shards[0].ShardID+`\s+finished`, string(sout))
	kids := 0
	for _, sh := range shards[1:] {
		if sh.ParentShardID == shards[0].ShardID {
			kids++
			assert.Contains(t, string(sout), sh.ShardID, "the split's child is in the fleet view")
		}
	}
	assert.Equal(t, 2, kids)

	for _, p := range procs {
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	}
	for _, p := range procs {
		select {
		case err := <-p.exited:
			require.NoError(t, err, "exit 0 after SIGTERM; logs:\n%s", logs())
		case <-time.After(30 * time.Second):
			t.Fatalf("no exit 30 s after SIGTERM; logs:\n%s", logs())
		}
	}
	all := logs()
	assert.Contains(t, all, "leases released")
	assert.Contains(t, all, "arn:aws:kinesis:", "the readers read the Kinesis stream")

	scan, err := env.Client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("leases"), ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	require.Len(t, scan.Items, len(shards), "a lease per Kinesis shard")
	for _, it := range scan.Items {
		key := it["leaseKey"].(*types.AttributeValueMemberS).Value
		if key == shards[0].ShardID {
			assert.Equal(t, "SHARD_END", it["checkpoint"].(*types.AttributeValueMemberS).Value, "the split shard is finished")
		}
	}
}

// TestK2_DemoKinesisFoldsEveryRow: `host demo --kinesis` reads the orders
// through ddblocal's Kinesis stream with two readers and checks every row.
func TestK2_DemoKinesisFoldsEveryRow(t *testing.T) {
	out := captureStdout(t, func() {
		require.NoError(t, runDemo(context.Background(), []string{"--kinesis", "--plugin", "native", "--orders", "40", "--seed", "3",
			"--duplicates", "0.3", "--reorder", "0.3", "--cache-dir", ""}))
	})
	assert.Contains(t, out, "through a Kinesis data stream")
	assert.Contains(t, out, "2 workers read")
	assert.Contains(t, out, "all 40 rows equal the in-order fold of their stream")
	assert.Error(t, runDemo(context.Background(), []string{"--kinesis", "--config", "x.json"}), "--kinesis runs the built-in demo only")
}
