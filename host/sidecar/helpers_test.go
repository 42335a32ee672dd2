package sidecar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/host/sidecar"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/testlogic"
)

const projection = "ledger"

// env is ddblocal with an event table, a read-model table and a lease
// table, all created by the host's CreateTables.
type env struct {
	*testenv.Env
	cfg    *host.Config
	faults *faults
	// clock is the server's clock: a test passes a retention by jumping
	// it, never by sleeping.
	clock *testenv.Clock
}

func start(t testing.TB, so ddblocal.StreamOptions, side host.SidecarConfig) *env {
	t.Helper()
	return startWith(t, func(o *ddblocal.Options) { o.Streams = so }, side)
}

// startWith is start with the server's options set by opt.
func startWith(t testing.TB, opt func(*ddblocal.Options), side host.SidecarConfig) *env {
	t.Helper()
	clock := &testenv.Clock{}
	e := testenv.Start(t, func(o *ddblocal.Options) {
		opt(o)
		o.Now = clock.Now
		if _, bench := t.(*testing.B); bench {
			o.Logger = quiet // the requests a stop cancels are logged as errors
		}
	})
	suffix := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(t.Name()))
	if len(suffix) > 30 {
		suffix = suffix[:30]
	}
	if side.LeaseTable == "" {
		side.LeaseTable = "leases-" + suffix
	}
	if side.PollInterval == 0 {
		side.PollInterval = host.Duration(10 * time.Millisecond)
	}
	if side.LeaseDuration == 0 {
		side.LeaseDuration = host.Duration(600 * time.Millisecond)
	}
	if side.BatchSize == 0 {
		side.BatchSize = 10
	}
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: "events-" + suffix, Schema: "bank", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: testlogic.Stream, Composite: []string{"acctId"}}}},
		Projections: []host.ProjectionConfig{{Name: projection, Table: "rows-" + suffix, Plugin: "native:ledger",
			Checkpoint: host.CheckpointConfig{Field: "_v"}}},
		Sidecar: &side,
	}
	if side.Kinesis != nil {
		side.Kinesis.Endpoint = e.Server.Endpoint()
	}
	en := &env{Env: e, cfg: cfg, faults: &faults{}, clock: clock}
	h := en.host(t, &testlogic.Ledger{})
	reps, err := h.CreateTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(reps, func(r host.TableReport) bool { return r.Table == side.LeaseTable }); i < 0 || !reps[i].Created {
		t.Fatalf("CreateTables did not create the lease table: %+v", reps)
	}
	return en
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// host builds a host running l.
func (e *env) host(t testing.TB, l logic.Logic) *host.Host {
	t.Helper()
	h, err := host.New(context.Background(), e.cfg, host.WithClient(e.Client), host.WithLogger(quiet), host.WithNative("ledger", l))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// reader builds a reader named worker over h, reading the stream through
// the fault-injecting transport.
func (e *env) reader(t testing.TB, h *host.Host, worker string, obs sidecar.Observer, edit ...func(*host.SidecarConfig)) *sidecar.Reader {
	t.Helper()
	return e.readerLogging(t, h, worker, obs, quiet, edit...)
}

// readerLogging is reader with its log going to log.
func (e *env) readerLogging(t testing.TB, h *host.Host, worker string, obs sidecar.Observer, log *slog.Logger, edit ...func(*host.SidecarConfig)) *sidecar.Reader {
	t.Helper()
	cfg := *e.cfg
	side := *cfg.Sidecar
	side.WorkerID = worker
	for _, f := range edit {
		f(&side)
	}
	cfg.Sidecar = &side
	r, err := sidecar.New(context.Background(), h, &cfg, sidecar.Options{Observer: obs, Logger: log, DynamoDB: e.Client, Streams: e.streamsClient(t)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// streamsClient is a DynamoDB Streams client of the server whose
// GetRecords calls go through the fault-injecting transport, on the wire
// path as the sidecar's own client is (feed.WithWire).
func (e *env) streamsClient(t testing.TB) feed.API {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return feed.WithWire(context.Background(), dynamodbstreams.New(dynamodbstreams.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(e.Server.Endpoint()),
		Credentials:      credentials.NewStaticCredentialsProvider("any", "any", ""),
		HTTPClient:       &http.Client{Transport: &faultTransport{next: tr, f: e.faults}},
		RetryMaxAttempts: 1,
	}))
}

// run runs r in the background; the returned stop cancels it with cause
// (nil: a graceful stop) and returns Run's error.
func run(r *sidecar.Reader) (stop func(cause error) error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return func(cause error) error {
		cancel(cause)
		return <-done
	}
}

// faults fails every Nth GetRecords call on the wire with a 500, and
// notes every DescribeStream call: "all" for a listing of the stream,
// "children of <shard>" for one with the child filter.
type faults struct {
	every    atomic.Int64
	n, fails atomic.Int64

	mu        sync.Mutex
	describes []string
}

// described returns the DescribeStream calls so far.
func (f *faults) described() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.describes...)
}

type faultTransport struct {
	next http.RoundTripper
	f    *faults
}

func (ft *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".DescribeStream") && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var in struct {
			ShardFilter *struct{ Type, ShardId string }
		}
		call := "all"
		if json.Unmarshal(body, &in) == nil && in.ShardFilter != nil {
			call = in.ShardFilter.Type + " of " + in.ShardFilter.ShardId
		}
		ft.f.mu.Lock()
		ft.f.describes = append(ft.f.describes, call)
		ft.f.mu.Unlock()
	}
	if strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".GetRecords") {
		if every := ft.f.every.Load(); every > 0 && ft.f.n.Add(1)%every == 0 {
			ft.f.fails.Add(1)
			body := `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"injected fault"}`
			return &http.Response{StatusCode: 500, Status: "500 Internal Server Error", Request: req,
				Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}, nil
		}
	}
	return ft.next.RoundTrip(req)
}

// appendAdds appends n "Add 1" events to stream instance id, one call each.
func appendAdds(t testing.TB, h *host.Host, id string, from, n int) {
	t.Helper()
	for v := from; v < from+n; v++ {
		if _, err := h.Append(context.Background(), testlogic.Stream, id, uint64(v), host.NewEvent{Type: "Add", Data: abi.Item{"n": abi.N(strconv.Itoa(v + 1))}}); err != nil {
			t.Fatal(err)
		}
	}
}

// foldLog is the row log of a stream instance folded from version 1 to n.
func foldLog(n int) string {
	var parts []string
	for v := 1; v <= n; v++ {
		parts = append(parts, strconv.Itoa(v))
	}
	return strings.Join(parts, ",")
}

// rowLog reads the log of a stream instance's row ("" when absent).
func (e *env) rowLog(t testing.TB, id string) string {
	t.Helper()
	it := e.Get(t, e.cfg.Projections[0].Table, testlogic.RowKey(id))
	if it == nil {
		return ""
	}
	return it["log"].Str
}

// waitRows waits until every stream instance's row has the log want[id].
func (e *env) waitRows(t testing.TB, want map[string]string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		bad := ""
		for id, w := range want {
			if got := e.rowLog(t, id); got != w {
				bad = fmt.Sprintf("row %s: log %q, want %q", id, got, w)
				break
			}
		}
		if bad == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, bad)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leaseRow is one lease item as stored.
type leaseRow struct{ key, owner, checkpoint, parents, instance string }

func (e *env) leases(t testing.TB) map[string]leaseRow {
	t.Helper()
	out, err := e.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.cfg.Sidecar.LeaseTable), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]leaseRow{}
	for _, it := range out.Items {
		str := func(a string) string {
			if v, ok := it[a].(*types.AttributeValueMemberS); ok {
				return v.Value
			}
			return ""
		}
		var parents string
		if v, ok := it["parentShardIds"].(*types.AttributeValueMemberSS); ok {
			parents = strings.Join(v.Value, ",")
		}
		m[str("leaseKey")] = leaseRow{str("leaseKey"), str("leaseOwner"), str("checkpoint"), parents, str("ownerInstance")}
	}
	return m
}

// span is one batch a worker processed on a shard: from the read that
// returned it to the end of its processing.
type span struct {
	worker, shard string
	from, to      time.Time
	records       int
}

// recorder is an Observer that records spans, leases held and records
// given up.
type recorder struct {
	sidecar.NopObserver
	worker  string
	mu      sync.Mutex
	readAt  map[string]time.Time
	readN   map[string]int
	spans   *[]span
	spansMu *sync.Mutex
	heldMax int
	given   []string
	batches int
	errs    []error
}

func newRecorder(worker string, spans *[]span, mu *sync.Mutex) *recorder {
	return &recorder{worker: worker, readAt: map[string]time.Time{}, readN: map[string]int{}, spans: spans, spansMu: mu}
}

func (o *recorder) ShardRead(_, shard string, n int, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n > 0 {
		if _, ok := o.readAt[shard]; !ok {
			o.readAt[shard] = time.Now()
		}
		o.readN[shard] += n
	}
}

func (o *recorder) BatchProcessed(_, shard string, _ *host.Result, _ time.Duration, err error) {
	o.mu.Lock()
	from, ok := o.readAt[shard]
	n := o.readN[shard]
	if ok {
		delete(o.readAt, shard)
		delete(o.readN, shard)
	}
	o.batches++
	if err != nil {
		o.errs = append(o.errs, err)
	}
	o.mu.Unlock()
	if ok {
		o.spansMu.Lock()
		*o.spans = append(*o.spans, span{o.worker, shard, from, time.Now(), n})
		o.spansMu.Unlock()
	}
}

func (o *recorder) LeasesHeld(_, _ string, held []string, _ int) {
	o.mu.Lock()
	o.heldMax = max(o.heldMax, len(held))
	o.mu.Unlock()
}

func (o *recorder) RecordGivenUp(p, _, shard string, rec host.Record, reason string) {
	o.mu.Lock()
	o.given = append(o.given, p+"|"+rec.DynamoDB.SequenceNumber+"|"+reason)
	o.mu.Unlock()
}

// waitEntries waits (at most a minute) until the onFailure file qfile
// holds at least n entries, and returns them.
func waitEntries(t *testing.T, qfile string, n int) []quarantine.Entry {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var es []quarantine.Entry
	for time.Now().Before(deadline) {
		if es, _ = quarantine.ReadFile(qfile); len(es) >= n {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return es
}
