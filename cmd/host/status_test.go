package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
)

// statusOutput runs `host status ARGS` and returns what it printed.
func statusOutput(args ...string) (string, error) {
	var out bytes.Buffer
	old := statusOut
	statusOut = &out
	defer func() { statusOut = old }()
	err := runStatus(context.Background(), args)
	return out.String(), err
}

// `host status` reads the lease table: the finished parents, the open
// child with its owner, checkpoint, parent and lag, and the worker with its
// last renewal; it exits 0 while every readable shard is read, and fails,
// naming the shard and for how long, once the worker stopped and nobody
// took the shard for longer than the lease duration.
func TestC6_StatusPrintsTheFleetAndFailsOnAShardNobodyReads(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{Shards: 1, ShardMaxRecords: 4}, `"leaseDuration": "30s"`, "") // one lineage
	e.createTables(t)
	for i := range 5 {
		e.place(t, fmt.Sprintf("o-%d", i))
	}
	w1 := e.startRun(t, "--worker-id", "w1", "--quiet")
	for i := range 5 {
		e.folded(t, fmt.Sprintf("o-%d", i), w1.logs)
	}

	out, err := statusOutput("--config", e.cfgPath, "--json")
	require.NoError(t, err, "every readable shard is read: %s", out)
	var v fleetJSON
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.Equal(t, "leases", v.LeaseTable)
	assert.Equal(t, int64(30000), v.LeaseDurationMS)
	assert.Contains(t, v.Stream, "table/events/stream/")
	require.Greater(t, len(v.Shards), 2, "10 records in shards of 4: the stream rolled over")
	var open *shardJSON
	finished := 0
	for i := range v.Shards {
		s := &v.Shards[i]
		switch s.State {
		case "finished":
			finished++
			assert.Equal(t, "SHARD_END", s.Checkpoint)
			assert.Empty(t, s.Owner, "a finished shard's lease is released")
		case "open":
			require.Nil(t, open, "one open shard: %s", out)
			open = s
		default:
			t.Errorf("shard %s is %s: %s", s.Shard, s.State, out)
		}
	}
	require.NotNil(t, open, out)
	assert.Equal(t, len(v.Shards)-1, finished)
	assert.Equal(t, "w1", open.Owner)
	require.Len(t, open.Parents, 1, "the open shard continues a closed one")
	assert.Equal(t, v.Shards[len(v.Shards)-2].Shard, open.Parents[0], "parents are listed before their children")
	require.NotNil(t, open.LagMS, "the lag of a read shard is known")
	assert.Zero(t, *open.LagMS, "caught up: no record waits after the checkpoint")
	require.Len(t, v.Workers, 1)
	assert.Equal(t, "w1", v.Workers[0].Worker)
	assert.True(t, v.Workers[0].Alive)
	assert.Equal(t, []string{open.Shard}, v.Workers[0].Shards)
	require.NotNil(t, v.Workers[0].LastRenewal)
	assert.Empty(t, v.Problems)

	text, err := statusOutput("--config", e.cfgPath)
	require.NoError(t, err)
	assert.Regexp(t, open.Shard+`\s+open\s+w1\s+\d+\s+`+open.Parents[0]+`\s+0s\s+`, text)
	assert.Regexp(t, `(?m)^w1\s+`+open.Shard+`\s+\S+ ago\s+yes`, text)

	// The worker stops; its lease is released. Read with a 300 ms lease
	// duration, the shard is soon unowned for longer than that.
	require.NoError(t, w1.stop(t))
	e.write(t, e.env.Server.Endpoint(), `"leaseDuration": "300ms"`, "")
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err = statusOutput("--config", e.cfgPath)
		if err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Error(t, err, "a shard nobody reads fails the status: %s", out)
	assert.Regexp(t, `shard `+open.Shard+` has had no owner for \d+(\.\d+)?m?s: no worker reads it; start a worker \(`+"`host run`"+`\)`, err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), "has had no owner"), "the finished shards are no problem")
	assert.Regexp(t, open.Shard+`\s+unowned \S+\s+-\s+\d+`, out)
	assert.Contains(t, out, "(none: no worker holds or asks for a lease)")

	// The exit status of the command line says so too.
	var stdout, stderr bytes.Buffer
	old := statusOut
	statusOut = &stdout
	defer func() { statusOut = old }()
	assert.Equal(t, 1, run(context.Background(), []string{"status", "--config", e.cfgPath, "--no-lag"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "host status: shard "+open.Shard+" has had no owner for")
}

// An event table that does not exist (a misspelt eventStore.table) is
// reported as missing, with the command that creates it, not as a table
// without a stream; and the status fails, since which shards are read
// cannot be known. It said "has no stream" and exited 0 before.
func TestC6_StatusReportsAMissingEventTableAndFails(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{Shards: 1}, "", "")
	e.createTables(t)
	b, err := os.ReadFile(e.cfgPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(e.cfgPath, bytes.Replace(b, []byte(`"table": "events"`), []byte(`"table": "events2"`), 1), 0o644))

	out, err := statusOutput("--config", e.cfgPath)
	require.Error(t, err, out)
	assert.ErrorIs(t, err, host.ErrTablesMissing)
	assert.Contains(t, err.Error(), "table events2 (event store) does not exist")
	assert.Contains(t, err.Error(), "`host tables create`")
	assert.NotContains(t, out+err.Error(), "has no stream")
	assert.Contains(t, out, "the stream could not be listed")

	out, err = statusOutput("--config", e.cfgPath, "--json")
	require.Error(t, err)
	var v fleetJSON
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.Contains(t, v.StreamError, "table events2 (event store) does not exist")
}

// A read-model table deleted under the fleet fails every record that
// writes to it; the lease table alone does not show that, so status checks
// the configuration's tables as host run does at its start, and fails.
func TestC6_StatusReportsAMissingReadModelTableAndFails(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{Shards: 1}, "", "")
	e.createTables(t)
	out, err := statusOutput("--config", e.cfgPath, "--no-lag")
	require.Error(t, err, out) // no worker runs: its shard is unowned
	assert.NotErrorIs(t, err, host.ErrTablesMissing)
	assert.NotContains(t, out, "tables missing")

	_, err = e.env.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String("summaries")})
	require.NoError(t, err)
	out, err = statusOutput("--config", e.cfgPath, "--no-lag")
	require.Error(t, err, out)
	assert.ErrorIs(t, err, host.ErrTablesMissing)
	assert.Contains(t, out, "tables missing: table summaries (projection summaries) does not exist")
	assert.Contains(t, err.Error(), "`host tables create`")
	assert.NotContains(t, err.Error(), "table events") // the event table is there

	out, err = statusOutput("--config", e.cfgPath, "--no-lag", "--json")
	require.Error(t, err)
	var v fleetJSON
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.Contains(t, v.TablesMissing, "table summaries (projection summaries) does not exist")
}

// A worker that holds no lease (it only asks for one) has no renewal to
// tell whether it is alive: status says so rather than "no", and a worker
// whose leases lapsed is still "no".
func TestC6_StatusDoesNotCallAWorkerWithoutALeaseDead(t *testing.T) {
	now := time.Now()
	var out strings.Builder
	require.NoError(t, printFleet(&out, sidecar.Fleet{At: now, Workers: []sidecar.FleetWorker{
		{ID: "w-new", Asking: []string{"shard-1"}},
		{ID: "w-gone", Shards: []string{"shard-2"}, LastRenewal: now.Add(-time.Minute)},
		{ID: "w-up", Shards: []string{"shard-3"}, LastRenewal: now, Alive: true, Plugins: map[string]string{"p": "p@1.0.0"}},
	}}))
	text := out.String()
	assert.Regexp(t, `w-new\s+- \(asking for shard-1\)\s+-\s+unknown \(holds no lease\)`, text)
	assert.Regexp(t, `w-gone\s+shard-2\s+\S+.*\s+no\s+-\n`, text)
	assert.Regexp(t, `w-up\s+shard-3\s+\S+.*\s+yes\s+p@1.0.0\n`, text)
}
