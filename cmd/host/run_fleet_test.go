package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/dynamotest"
	"github.com/dynafold/dynafold/internal/syncbuf"
)

// proc is a process of the host binary the test started.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	exited chan error
}

func startProc(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), stderr: &syncbuf.Buffer{}, exited: make(chan error, 1)}
	p.cmd.Env, p.cmd.Stderr = env, p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// term sends SIGTERM and returns the exit error.
func (p *proc) term(t *testing.T) error {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.exited:
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no exit 60 s after SIGTERM; stderr:\n%s", p.name, p.stderr)
		return nil
	}
}

// `host run` as the built binary, three processes on a `host ddblocal
// --stream-shards 8 --latency 5ms` (the binary too): every row folded
// right, the eight shards spread over the three (two or more each), a
// fourth process started with a worker id already running refuses to
// start naming the holder, and SIGTERM stops each cleanly.
func TestC5_RunBinaryThreeProcessesShareEightShardsOfDdblocalWithLatency(t *testing.T) {
	dir := t.TempDir()
	bin := hostBinary(t)
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	endpoint := "http://" + addr
	db := startProc(t, "ddblocal", bin, env, "ddblocal", "--addr", addr, "--stream-shards", "8", "--latency", "5ms")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(endpoint); err == nil {
			resp.Body.Close()
			break
		}
		require.True(t, time.Now().Before(deadline), "ddblocal did not listen on %s; stderr:\n%s", addr, db.stderr)
		time.Sleep(20 * time.Millisecond)
	}

	plugin, err := os.ReadFile(v1Path(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "orders.wasm"), plugin, 0o644))
	cfgPath := filepath.Join(dir, "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `{
  "endpoint": %q,
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "plugins": {"cacheDir": %q},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": "summaries", "checkpoint": {"field": "version"}}],
  "sidecar": {"leaseTable": "leases", "pollInterval": "20ms", "leaseDuration": "1500ms", "batchSize": 10}
}`, endpoint, testCacheDir), 0o644))
	out, err := func() ([]byte, error) {
		c := exec.Command(bin, "tables", "create", "--config", cfgPath)
		c.Env = env
		return c.CombinedOutput()
	}()
	require.NoError(t, err, "%s", out)

	workers := []string{"w1", "w2", "w3"}
	runs := map[string]*proc{}
	for _, w := range workers {
		runs[w] = startProc(t, w, bin, env, "run", "--config", cfgPath, "--worker-id", w, "--quiet")
	}
	logs := func() string {
		var b strings.Builder
		for _, w := range workers {
			fmt.Fprintf(&b, "--- %s:\n%s\n", w, runs[w].stderr)
		}
		return b.String()
	}
	client := dynamotest.ClientAt(t, endpoint)
	ctx := context.Background()
	owners := func() map[string]int {
		scan, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("leases"), ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		n := map[string]int{}
		for _, it := range scan.Items {
			if o, ok := it["leaseOwner"].(*types.AttributeValueMemberS); ok {
				n[o.Value]++
			}
		}
		return n
	}
	spread := func() bool {
		n := owners()
		return n["w1"] >= 2 && n["w2"] >= 2 && n["w3"] >= 2 && n["w1"]+n["w2"]+n["w3"] == 8
	}
	for deadline := time.Now().Add(60 * time.Second); !spread(); time.Sleep(50 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the eight shards were not spread: %v\n%s", owners(), logs())
	}

	// a fourth process under a worker id that is running refuses to start
	dup := startProc(t, "duplicate", bin, env, "run", "--config", cfgPath, "--worker-id", "w2", "--quiet")
	select {
	case err := <-dup.exited:
		require.Error(t, err, "a second w2 exits 1")
		assert.Contains(t, dup.stderr.String(), `host run: worker id "w2" is already used by another process`)
		assert.Contains(t, dup.stderr.String(), "--worker-id")
	case <-time.After(30 * time.Second):
		t.Fatalf("a second process with worker id w2 still runs after 30 s; stderr:\n%s", dup.stderr)
	}

	cfg, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	es, err := host.New(ctx, cfg, host.WithEventStoreOnly(), host.WithClient(client))
	require.NoError(t, err)
	defer es.Close(ctx)
	const orders, items = 24, 4
	var wg sync.WaitGroup
	errs := make(chan error, orders)
	for i := 0; i < orders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("o-%02d", i)
			if _, err := es.Append(ctx, "Order", id, 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}}); err != nil {
				errs <- err
				return
			}
			for v := 1; v <= items; v++ {
				if _, err := es.Append(ctx, "Order", id, uint64(v), host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("1.25")}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i := 0; i < orders; i++ {
		key := abi.Item{"pk": abi.S(fmt.Sprintf("OrderSummary#o-%02d", i)), "sk": abi.S("OrderSummary")}
		deadline := time.Now().Add(60 * time.Second)
		for {
			it := get(t, client, key)
			if it != nil && it["version"].Str == strconv.Itoa(items+1) {
				assert.Equal(t, strconv.Itoa(items), it["items"].Str)
				total, err := strconv.ParseFloat(it["total"].Str, 64)
				require.NoError(t, err)
				assert.Equal(t, 1.25*items, total)
				break
			}
			require.True(t, time.Now().Before(deadline), "order o-%02d: %v\n%s", i, it, logs())
			time.Sleep(20 * time.Millisecond)
		}
	}
	n := owners()
	for _, w := range workers {
		assert.GreaterOrEqual(t, n[w], 2, "%s holds two shards or more: %v", w, n)
	}
	for _, w := range workers {
		require.NoError(t, runs[w].term(t), "%s exits 0 after SIGTERM; stderr:\n%s", w, runs[w].stderr)
		assert.Contains(t, runs[w].stderr.String(), "leases released")
	}
	assert.Empty(t, owners(), "every lease released")
	require.NoError(t, db.term(t))
}

// get reads one item strongly consistent (nil when absent).
func get(t *testing.T, c *dynamodb.Client, key abi.Item) abi.Item {
	t.Helper()
	k, err := ddbclient.ToAttributeMap(key)
	require.NoError(t, err)
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("summaries"), Key: k, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	if out.Item == nil {
		return nil
	}
	it, err := ddbclient.FromAttributeMap(out.Item)
	require.NoError(t, err)
	return it
}
