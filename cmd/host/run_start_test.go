package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/internal/backoff"
	"github.com/dynafold/dynafold/internal/testenv"
)

// waitDone waits up to d for the run to return by itself.
func (r *inProcessRun) waitDone(t *testing.T, d time.Duration) (error, bool) {
	t.Helper()
	select {
	case err := <-r.done:
		close(r.done)
		return err, true
	case <-time.After(d):
		return nil, false
	}
}

// A read-model table that does not exist is found before anything is
// read: `host run` refuses to start, names the table and the command that
// creates it, and reads nothing (before, every record was given up into
// the quarantine table and the checkpoint moved past the whole stream).
func TestH2_RunRefusesToStartWhenAReadModelTableIsMissing(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{}, `"leaseDuration": "1s", "failure": {"maxRetries": 0, "onFailure": {"table": "quarantine"}}`,
		`, "quarantine": {"table": "quarantine"}`)
	e.createTables(t)
	_, err := e.env.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String("summaries")})
	require.NoError(t, err)
	e.place(t, "o-1")

	run := e.startRun(t, "--worker-id", "w1", "--quiet")
	err, done := run.waitDone(t, 20*time.Second)
	require.True(t, done, "host run started reading without its read-model table; log:\n%s", run.logs)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "table summaries (projection summaries) does not exist")
	assert.Contains(t, err.Error(), "host tables create --config "+e.cfgPath)
	scan, err := e.env.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("quarantine")})
	require.NoError(t, err)
	assert.Zero(t, scan.Count, "nothing was given up")
	leases, err := e.env.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("leases")})
	require.NoError(t, err)
	assert.Zero(t, leases.Count, "no lease, no checkpoint was written")
}

// A missing event table says so, rather than that it has no stream.
func TestH2_RunSaysAMissingEventTableDoesNotExist(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{}, `"leaseDuration": "1s"`, "")
	e.createTables(t)
	_, err := e.env.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String("events")})
	require.NoError(t, err)
	run := e.startRun(t, "--worker-id", "w1", "--quiet")
	err, done := run.waitDone(t, 20*time.Second)
	require.True(t, done, "log:\n%s", run.logs)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "table events (event store) does not exist")
	assert.NotContains(t, err.Error(), "enable one")
	assert.Contains(t, err.Error(), "host tables create --config")
}

// With the endpoint down at start, `host run` waits for it as a running
// worker does: one log line per retry, /readyz not ready and saying why;
// once the endpoint answers, it starts and folds the feed.
func TestH2_RunRetriesAnUnreachableEndpointAtStart(t *testing.T) {
	old := startRetry
	startRetry = backoff.Policy{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond}
	defer func() { startRetry = old }()
	addr, release := testenv.ClosedAddr(t) // nothing listens there

	e := newSidecarEnv(t, ddblocal.StreamOptions{}, `"leaseDuration": "1s"`, "")
	e.write(t, "http://"+addr, `"leaseDuration": "1s"`, "")
	run := e.startRun(t, "--worker-id", "w1", "--quiet", "--admin-addr", "127.0.0.1:0")
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(run.logs.String(), "the DynamoDB endpoint cannot be reached; retrying") < 2 {
		if err, done := run.waitDone(t, 20*time.Millisecond); done {
			t.Fatalf("host run returned %v instead of retrying; log:\n%s", err, run.logs)
		}
		require.True(t, time.Now().Before(deadline), "no retries logged; log:\n%s", run.logs)
	}
	assert.Contains(t, run.logs.String(), `"endpoint":"http://`+addr+`"`)
	resp, err := http.Get(adminURLFromLogs(t, run.logs.String()) + "/readyz")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "the DynamoDB endpoint cannot be reached yet")

	// the endpoint comes up, its tables already there: a forwarder to
	// the server starts listening at the address the run retries
	up := testenv.Start(t)
	e.env = up
	e.write(t, up.Server.Endpoint(), `"leaseDuration": "1s"`, "")
	e.createTables(t)
	e.write(t, "http://"+addr, `"leaseDuration": "1s"`, "")
	release()
	forward(t, addr, strings.TrimPrefix(up.Server.Endpoint(), "http://"))
	e.place(t, "o-1")
	e.folded(t, "o-1", run.logs)
	require.NoError(t, run.stop(t))
}

// forward listens on addr and forwards every connection to to, until the
// test ends.
func forward(t *testing.T, addr, to string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				defer s.Close()
				go func() { _, _ = io.Copy(s, c) }()
				_, _ = io.Copy(c, s)
			}()
		}
	}()
}

// SIGTERM (the context ending) while the plugins load is a clean stop:
// `host run` returns no error (exit 0), and says it stopped while starting.
func TestH2_StopWhileThePluginLoadsIsACleanExit(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{}, `"leaseDuration": "1s"`, "")
	e.createTables(t)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	var stages []string // the stages the run entered, in its goroutine
	runStage = func(stage string) {
		stages = append(stages, stage)
		if stage == "loading the plugins" {
			cancel() // the signal arrives as the plugin starts loading
			close(stopped)
		}
	}
	// Registered before the run's cleanup, so it runs after the run ended,
	// whatever this test's assertions did.
	t.Cleanup(func() { runStage = nil })
	run := e.startRunCtx(t, ctx, cancel, "--worker-id", "w1", "--quiet")
	err, done := run.waitDone(t, 2*time.Minute)
	require.True(t, done, "host run did not return 2 minutes after starting; log:\n%s", run.logs)
	select {
	case <-stopped:
	default:
		t.Fatalf("host run returned %v before loading the plugins; log:\n%s", err, run.logs)
	}
	require.NoError(t, err, "a stop during the start is no failure; log:\n%s", run.logs)
	assert.Contains(t, run.logs.String(), `"msg":"stopped while starting","stage":"loading the plugins"`)
	assert.Equal(t, []string{"checking the tables", "loading the plugins"}, stages, "the run went no further than loading the plugins")
}
