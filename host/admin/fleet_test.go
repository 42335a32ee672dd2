package admin_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/opstest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// nonOwner runs two readers of one stream on ddblocal, w1 holding its only
// shard and w2 standing by, and serves w2's status page. It returns the
// page's server and the shard's id.
func nonOwner(t *testing.T) (*admin.Server, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	oneShard := func(o *ddblocal.Options) { o.Streams.Shards = 1 }
	// A lease of a minute: w1 cannot miss a renewal and lose the shard to
	// w2 however loaded the machine is (3 s did not guarantee it).
	f := opstest.StartWith(t, oneShard, `, "sidecar": {"leaseTable": "leases", "leaseDuration": "1m", "pollInterval": "20ms"}`)
	_, err := f.Host.CreateTables(ctx)
	require.NoError(t, err)
	f.Append(t, "a", 0, opstest.Add(2), opstest.Add(3))
	reader := func(worker string, m *telemetry.Metrics) *sidecar.Reader {
		cfg := *f.Cfg
		sc := *cfg.Sidecar
		sc.WorkerID = worker
		cfg.Sidecar = &sc
		r, err := sidecar.New(ctx, f.Host, &cfg, sidecar.Options{Observer: m, Logger: quiet, DynamoDB: f.Env.Client})
		require.NoError(t, err)
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return r
	}
	m1, m2 := telemetry.New(telemetry.Options{}), telemetry.New(telemetry.Options{})
	r1 := reader("w1", m1)
	// The page shows what the lease table holds, so wait for that, not for
	// w1's count of records read: w1 counts a batch before it folds it and
	// its checkpoint lands after, so the page could show the checkpoint
	// behind (a lag, or no sequence number at all).
	deadline := time.Now().Add(time.Minute)
	for {
		fl, err := r1.Fleet(ctx, sidecar.FleetOptions{Lag: true})
		require.NoError(t, err)
		if len(fl.Shards) == 1 {
			s := fl.Shards[0]
			if s.Owner == "w1" && s.State == sidecar.ShardOpen && s.LagKnown && s.Lag == 0 && regexp.MustCompile(`^\d+$`).MatchString(s.Checkpoint) {
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "w1 never checkpointed the shard's records: %+v", fl.Shards)
		time.Sleep(10 * time.Millisecond)
	}
	r2 := reader("w2", m2)
	for !m2.LeaseRoundDone() {
		require.True(t, time.Now().Before(deadline), "w2 never did a lease round")
		time.Sleep(10 * time.Millisecond)
	}
	require.Zero(t, r2.Stats().Shards, "w2 stands by")
	m2.ServePlugins(f.Host)
	srv, err := admin.Start(ctx, admin.Options{Addr: "127.0.0.1:0", Metrics: m2, Worker: "w2", Logger: quiet,
		Fleet: func(ctx context.Context) (sidecar.Fleet, error) {
			return r2.Fleet(ctx, sidecar.FleetOptions{Lag: true})
		}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	fl, err := r2.Fleet(ctx, sidecar.FleetOptions{})
	require.NoError(t, err)
	require.Len(t, fl.Shards, 1)
	return srv, fl.Shards[0].ID
}

// checkNonOwnerPage asserts what a standby worker's page shows of the fleet.
func checkNonOwnerPage(t *testing.T, page, shard string) {
	t.Helper()
	assert.Contains(t, page, `<strong id="worker">w2</strong>`, "the page names its own worker")
	assert.Regexp(t, `<tr><td>`+regexp.QuoteMeta(shard)+`</td><td>open</td><td>w1</td><td>\d+</td><td>-</td><td>0s</td><td>\S+ ago</td></tr>`, page,
		"the shard another worker reads, with its owner, checkpoint and lag")
	assert.Regexp(t, `<tr><td>w1</td><td>`+regexp.QuoteMeta(shard)+`</td><td>\S+ ago</td><td>yes</td></tr>`, page)
	assert.Regexp(t, `<tr class="mine"><td>w2 \(this worker\)</td><td>none: every readable shard is held by another worker \(standby\)</td>`, page)
	assert.Contains(t, page, "No shard read yet by this worker (the fleet above shows who reads them).")
	assert.Contains(t, page, `<table id="counters">`)
}

// The status page of a worker that holds no shard shows the whole fleet
// from the lease table: the shard with the other worker as owner, both
// workers, this one marked.
func TestC6_StatusPageOfANonOwnerShowsTheFleet(t *testing.T) {
	srv, shard := nonOwner(t)
	code, body := get(t, srv.URL()+"/")
	require.Equal(t, http.StatusOK, code)
	checkNonOwnerPage(t, body, shard)
}

// The same page, loaded in headless chromium, parses into a DOM with the
// fleet and worker tables and their rows.
func TestC6_StatusPageOfANonOwnerRendersInAHeadlessBrowser(t *testing.T) {
	bin := chromium(t)
	srv, shard := nonOwner(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--dump-dom", srv.URL()+"/").Output()
	require.NoError(t, err, "chromium --dump-dom")
	dom := string(out)
	for _, id := range []string{"fleet", "workers", "counters", "plugins"} {
		assert.Contains(t, dom, `<table id="`+id+`">`, "the %s table is in the DOM", id)
	}
	assert.Contains(t, dom, `<table id="fleet"><tbody><tr><th>Shard</th>`, "the fleet rows parsed as table rows")
	checkNonOwnerPage(t, dom, shard)
}

// A record given up to the quarantine table and then replayed (its entry
// deleted, as `host quarantine replay` does) says so on the page, with the
// time it was first seen replayed; before, it stays "no".
func TestC6_RecentFailuresSayWhenTheyWereReplayed(t *testing.T) {
	ctx := context.Background()
	f := opstest.Start(t, `, "quarantine": {"table": "quarantine"}`)
	_, err := f.Host.CreateTables(ctx)
	require.NoError(t, err)
	q, err := quarantine.NewTable(f.Env.Client, "quarantine")
	require.NoError(t, err)
	recs := f.Append(t, "a", 0, opstest.Fail(), opstest.Fail())
	m := telemetry.New(telemetry.Options{})
	for _, rec := range recs { // as the reader gives them up
		require.NoError(t, q.Send(ctx, quarantine.Entry{Projection: "ledger", Stream: "Acct", Shard: "shardId-1", Record: rec, Reason: "boom", Attempts: 1}))
		m.RecordGivenUp("ledger", "Acct", "shardId-1", rec, "boom")
	}
	srv, err := admin.Start(ctx, admin.Options{Addr: "127.0.0.1:0", Metrics: m, Logger: quiet,
		Replayed: func(ctx context.Context, fs []telemetry.Failure) (map[string]bool, error) {
			var ids []string
			for _, f := range fs {
				ids = append(ids, f.EntryID)
			}
			return q.Gone(ctx, ids)
		}})
	require.NoError(t, err)
	defer srv.Close()
	row := func(seq string) *regexp.Regexp {
		return regexp.MustCompile(`<td>` + seq + `</td><td>boom</td><td>([^<]*)</td>`)
	}
	_, body := get(t, srv.URL()+"/")
	for _, rec := range recs {
		m := row(rec.DynamoDB.SequenceNumber).FindStringSubmatch(body)
		require.NotNil(t, m, "the failure is listed with a Replayed column: %s", body)
		assert.Equal(t, "no", m[1], "still quarantined")
	}
	id := quarantine.EntryID(quarantine.Entry{Projection: "ledger", Stream: "Acct", Shard: "shardId-1", Record: recs[0]})
	require.NoError(t, q.Delete(ctx, id)) // replayed
	_, body = get(t, srv.URL()+"/")
	m0 := row(recs[0].DynamoDB.SequenceNumber).FindStringSubmatch(body)
	require.NotNil(t, m0, body)
	assert.Regexp(t, `^replayed \(seen \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$`, m0[1])
	m1 := row(recs[1].DynamoDB.SequenceNumber).FindStringSubmatch(body)
	require.NotNil(t, m1, body)
	assert.Equal(t, "no", m1[1], "the other one is still quarantined")
}
