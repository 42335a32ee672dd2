package kfeed_test

import (
	"bufio"
	"context"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/kfeed"
	"github.com/dynafold/dynafold/internal/kinesisclient"
)

// kinesaliteEndpoint returns the endpoint of a kinesalite to test against:
// the conformance run's (KINESIS_CONFORMANCE_TARGET=kinesalite), else one
// this test starts in memory on 127.0.0.1 from the copy
// ddblocal/conformance/kinesalite.sh installs (KINESALITE_DIR, default
// .cache/kinesalite). Without node or that copy the test is skipped.
func kinesaliteEndpoint(t *testing.T) string {
	t.Helper()
	if ep := os.Getenv("KINESIS_CONFORMANCE_ENDPOINT"); ep != "" && os.Getenv("KINESIS_CONFORMANCE_TARGET") == "kinesalite" {
		return ep
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("kinesalite: node is not installed; install Node.js, then `bash ddblocal/conformance/kinesalite.sh install` (make test does)")
	}
	dir := os.Getenv("KINESALITE_DIR")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "..", ".cache", "kinesalite"))
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "kinesalite", "package.json")); err != nil {
		t.Skipf("kinesalite is not installed in %s: run `bash ddblocal/conformance/kinesalite.sh install` (make test does)", dir)
	}
	cmd := exec.Command(node, "-e", `
		const kinesalite = require(process.argv[1] + "/node_modules/kinesalite")
		const server = kinesalite({createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 100000})
		server.listen(0, "127.0.0.1", err => {
			if (err) { console.error(err); process.exit(1) }
			console.log("port " + server.address().port)
		})`, dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		port, ok := strings.CutPrefix(l, "port ")
		require.True(t, ok, "kinesalite did not start: %q", l)
		return "http://127.0.0.1:" + port
	case <-time.After(30 * time.Second):
		t.Fatal("kinesalite did not start within 30 s")
	}
	return ""
}

func TestK2_ReaderFindsDrainedShardsChildrenByListing(t *testing.T) {
	ep := kinesaliteEndpoint(t)
	ctx := context.Background()
	kc, err := kinesisclient.NewClient(ctx, ep, "")
	require.NoError(t, err)
	name := fmt.Sprintf("k2-%d", time.Now().UnixNano()) // one kinesalite serves every run of the test
	_, err = kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(1)})
	require.NoError(t, err)
	waitActive(t, kc, name)
	before := put(t, kc, name, "a", 0, 2)

	rd, err := kfeed.Open(ctx, kc, name, kfeed.Options{ReadsPerSecond: -1, PollInterval: time.Millisecond})
	require.NoError(t, err)
	shards, err := rd.Shards(ctx)
	require.NoError(t, err)
	require.Len(t, shards, 1)
	parent := shards[0].ID
	mid := new(big.Int).Lsh(big.NewInt(1), 127)
	_, err = kc.SplitShard(ctx, &kinesis.SplitShardInput{StreamName: aws.String(name), ShardToSplit: aws.String(parent), NewStartingHashKey: aws.String(mid.String())})
	require.NoError(t, err)
	waitActive(t, kc, name)
	after := put(t, kc, name, "b", 0, 1)

	// the parent drained: finished, and kinesalite names no children in GetRecords
	it := rd.Iterator(parent, "")
	var got []string
	for !it.Finished() {
		b, err := it.Next(ctx)
		require.NoError(t, err)
		got = append(got, seqsOf(b.Records)...)
	}
	assert.Equal(t, before, got)

	kids, err := rd.Children(ctx, parent)
	require.NoError(t, err)
	require.Len(t, kids, 2, "both halves of the split found by listing")
	for _, k := range kids {
		assert.Equal(t, []string{parent}, k.Parents())
	}
	all, err := rd.Shards(ctx)
	require.NoError(t, err)
	assert.Len(t, feed.Ready(all, map[string]bool{parent: true}), 2, "the children are ready once the parent is finished")
	ready := feed.Ready(all, nil)
	require.Len(t, ready, 1, "before the parent is finished, only it is ready")
	assert.Equal(t, parent, ready[0].ID)

	// the record after the split is in one of the children
	got = nil
	for _, k := range kids {
		b, err := rd.Iterator(k.ID, "").Next(ctx)
		require.NoError(t, err)
		got = append(got, seqsOf(b.Records)...)
	}
	assert.Equal(t, after, got)
}
