package lambda_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambda"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/dynamotest"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// The plugin versions of the hot-swap tests: order-summary 1.0.0, and the
// host/swap tests' 2.0.0 (rows carry model = 2) and its broken twin.
const (
	pluginV1     = "../../plugins/examples/order-summary/wasm"
	pluginV2     = "../swap/testdata/v2"
	pluginV2Trap = "../swap/testdata/v2trap" // self_test traps: refused by the smoke test
)

const (
	byV1 = "order-summary@1.0.0"
	byV2 = "order-summary@2.0.0"
)

// swapFn is a handler whose projection's plugin is hot-swapped from a
// watched directory (hotSwap {"watch": true}).
type swapFn struct {
	*fn
	dir     string          // holds orders.wasm
	log     *syncbuf.Buffer // the JSON log
	metrics *syncbuf.Buffer // the EMF lines
}

// newSwapFn serves order-summary 1.0.0 from dir/orders.wasm. client, when
// set, is the host's DynamoDB client.
func newSwapFn(t *testing.T, env *testenv.Env, client *dynamodb.Client) *swapFn {
	t.Helper()
	f := &swapFn{fn: &fn{env: env, events: env.Table(t, "events", true), rows: env.Table(t, "summaries", false)}, dir: t.TempDir(),
		log: &syncbuf.Buffer{}, metrics: &syncbuf.Buffer{}}
	f.offer(t, wasmbuild.Build(t, pluginV1))
	if client == nil {
		client = env.Client
	}
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: f.events, Schema: "shop", SchemaVersion: 1, Streams: []host.StreamConfig{
			{Name: "Order", EventTypes: []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, Composite: []string{"orderId"}}}},
		Plugins: host.PluginDefaults{CacheDir: filepath.Join(f.dir, "cache")},
		Projections: []host.ProjectionConfig{{Name: "summaries", Plugin: filepath.Join(f.dir, "orders.wasm"), Table: f.rows,
			Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}, WrittenBy: "writtenBy",
			// every row read first, new ones too: TestH3_LambdaNeverSwapsDuringAnInvocation
			// holds an invocation at that read, before its fold
			ReadNewRows: true,
			HotSwap:     &host.HotSwapConfig{Watch: true}}},
	}
	log := slog.New(slog.NewJSONHandler(f.log, nil))
	h, call, err := lambda.Build(context.Background(), cfg, []host.Option{host.WithClient(client)},
		lambda.WithLogger(log), lambda.WithMetrics(f.metrics))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	f.call = call
	return f
}

// offer renames wasm into place as dir/orders.wasm, as a deployment would.
func (f *swapFn) offer(t *testing.T, wasm []byte) {
	t.Helper()
	tmp := filepath.Join(f.dir, ".orders.wasm.tmp")
	if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.dir, "orders.wasm")); err != nil {
		t.Fatal(err)
	}
}

var orderID = regexp.MustCompile(`\bo-(\d+)\b`)

// batch is the captured stream_event.json (orders o-1, o-2, o-3) for
// orders o-1<tag>, o-2<tag>, o-3<tag>, seeded in the event table: a fresh
// batch per invocation, so each one writes rows of its own.
func (f *swapFn) batch(t *testing.T, tag string) json.RawMessage {
	t.Helper()
	b := orderID.ReplaceAll(fixture(t, "stream_event.json"), []byte("o-${1}"+tag))
	f.seed(t, b)
	return b
}

// wantWrittenBy checks the rows of batch tag: the fold of the captured
// batch, written by plugin (model "2" for 2.0.0's rows).
func (f *swapFn) wantWrittenBy(t *testing.T, tag, plugin string) {
	t.Helper()
	model := ""
	if plugin == byV2 {
		model = "2"
	}
	f.wantRow(t, "o-1"+tag, summary{"shipped", "2", "19.75", "4"})
	f.wantRow(t, "o-2"+tag, summary{"placed", "1", "100", "2"})
	f.wantRow(t, "o-3"+tag, summary{"placed", "0", "0", "1"})
	for _, o := range []string{"o-1", "o-2", "o-3"} {
		it := f.row(t, o+tag)
		if it["writtenBy"].Str != plugin || it["model"].Str != model {
			t.Errorf("row %s%s: writtenBy %q model %q, want %q %q", o, tag, it["writtenBy"].Str, it["model"].Str, plugin, model)
		}
	}
}

// invokeOK invokes the handler with batch tag and wants no failure.
func (f *swapFn) invokeOK(t *testing.T, tag string) {
	t.Helper()
	if ids := f.mustInvoke(t, f.batch(t, tag)); len(ids) != 0 {
		t.Fatalf("batch %s: batchItemFailures = %v, want none", tag, ids)
	}
}

// lastMetrics returns the values of the last EMF line.
func (f *swapFn) lastMetrics(t *testing.T) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(f.metrics.String()), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("metric line: %v", err)
	}
	return m
}

// wantSwapMetrics checks the last invocation's PluginSwaps and
// PluginSwapFailures.
func (f *swapFn) wantSwapMetrics(t *testing.T, swaps, failures float64) {
	t.Helper()
	m := f.lastMetrics(t)
	if m["PluginSwaps"] != swaps || m["PluginSwapFailures"] != failures {
		t.Errorf("metrics PluginSwaps %v PluginSwapFailures %v, want %v %v", m["PluginSwaps"], m["PluginSwapFailures"], swaps, failures)
	}
}

// logLines returns the JSON log lines whose msg is msg.
func (f *swapFn) logLines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(f.log.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestH3_LambdaSwapsBetweenInvocations: a module renamed into the watched
// directory after an invocation serves the whole of the next one; a broken
// module offered between invocations is refused, logged and counted, and
// the version before keeps serving an invocation that succeeds.
func TestH3_LambdaSwapsBetweenInvocations(t *testing.T) {
	f := newSwapFn(t, testenv.Start(t), nil)

	f.invokeOK(t, "a")
	f.wantWrittenBy(t, "a", byV1)
	f.wantSwapMetrics(t, 0, 0)

	f.offer(t, wasmbuild.Build(t, pluginV2))
	f.invokeOK(t, "b")
	f.wantWrittenBy(t, "b", byV2)
	f.wantSwapMetrics(t, 1, 0)
	if l := f.logLines(t, "plugin swapped"); len(l) != 1 || l[0]["from"] != byV1 || l[0]["to"] != byV2 || l[0]["projection"] != "summaries" {
		t.Errorf("swap log = %v, want one line from %s to %s", l, byV1, byV2)
	}

	f.invokeOK(t, "c") // nothing new: no swap, no failure
	f.wantWrittenBy(t, "c", byV2)
	f.wantSwapMetrics(t, 0, 0)

	broken := []struct {
		name string
		wasm []byte
		step string
	}{
		{"self_test traps", wasmbuild.Build(t, pluginV2Trap), swap.StepSmoke},
		{"not a module", []byte("\x00asm but not really"), swap.StepLoad},
	}
	for i, b := range broken {
		tag := string(rune('d' + i))
		f.offer(t, b.wasm)
		f.invokeOK(t, tag)
		f.wantWrittenBy(t, tag, byV2)
		f.wantSwapMetrics(t, 0, 1)
		refused := f.logLines(t, "plugin candidate refused; the current version keeps serving")
		if len(refused) != i+1 || refused[i]["current"] != byV2 || !strings.Contains(refused[i]["err"].(string), "refused at "+b.step) {
			t.Errorf("%s: refusal log = %v, want a line naming step %s", b.name, refused, b.step)
		}
	}
	summaries := f.logLines(t, "batch")
	if n := len(summaries); n != 5 || summaries[n-1]["pluginSwapFailures"] != 1.0 || summaries[1]["pluginSwaps"] != 1.0 {
		t.Errorf("summaries = %v, want 5, the second with pluginSwaps 1, the last with pluginSwapFailures 1", summaries)
	}
}

// TestH3_LambdaNeverSwapsDuringAnInvocation holds an invocation in flight
// (its read of the rows blocks), renames 2.0.0 into the watched directory
// and runs a second invocation beside it, as a runtime with
// AWS_LAMBDA_MAX_CONCURRENCY > 1 does: that one must not check while the
// first is in flight, so both are served by 1.0.0, all the first's rows
// too although they are folded after the module appeared. The next
// invocation, with none in flight, swaps 2.0.0 in.
func TestH3_LambdaNeverSwapsDuringAnInvocation(t *testing.T) {
	env := testenv.Start(t)
	hold := &holdRows{entered: make(chan struct{}), release: make(chan struct{})}
	client := dynamotest.ClientAt(t, env.Server.Endpoint(), func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: &holdTransport{next: doTransport{o.HTTPClient}, hold: hold}}
	})
	f := newSwapFn(t, env, client)
	v2 := wasmbuild.Build(t, pluginV2)

	payload := f.batch(t, "a")
	hold.arm()
	first := make(chan []string, 1)
	go func() {
		resp, err := f.call(context.Background(), payload)
		if err != nil {
			t.Errorf("invocation a: %v", err)
		}
		first <- itemIDs(resp)
	}()
	select {
	case <-hold.entered: // a is in flight: it reads its rows
	case <-time.After(time.Minute):
		t.Fatal("invocation a never read its rows")
	}
	f.offer(t, v2)
	f.invokeOK(t, "b") // beside a: no check while a is in flight
	close(hold.release)
	if ids := <-first; len(ids) != 0 {
		t.Fatalf("invocation a: batchItemFailures = %v, want none", ids)
	}
	f.wantWrittenBy(t, "a", byV1)
	f.wantWrittenBy(t, "b", byV1)
	if l := f.logLines(t, "plugin swapped"); len(l) != 0 {
		t.Fatalf("swapped while an invocation was in flight: %v", l)
	}

	f.invokeOK(t, "c")
	f.wantWrittenBy(t, "c", byV2)
	f.wantSwapMetrics(t, 1, 0)
}

// holdRows blocks the first read of read-model rows after arm until
// release is closed.
type holdRows struct {
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
}

func (h *holdRows) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = true
}

// take reports whether this request is the one to hold (once).
func (h *holdRows) take() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ok := h.armed
	h.armed = false
	return ok
}

// doTransport sends a request with an SDK HTTP client.
type doTransport struct {
	c interface {
		Do(*http.Request) (*http.Response, error)
	}
}

func (d doTransport) RoundTrip(req *http.Request) (*http.Response, error) { return d.c.Do(req) }

// holdTransport holds the request of a row read (BatchGetItem or GetItem)
// that holdRows picks, on its way to ddblocal.
type holdTransport struct {
	next http.RoundTripper
	hold *holdRows
}

func (tr *holdTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	target := req.Header.Get("X-Amz-Target")
	if (strings.HasSuffix(target, ".BatchGetItem") || strings.HasSuffix(target, ".GetItem")) && tr.hold.take() {
		close(tr.hold.entered)
		select {
		case <-tr.hold.release:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return tr.next.RoundTrip(req)
}
