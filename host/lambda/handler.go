// Package lambda is dynafold's AWS Lambda function handler: a
// DynamoDB stream event in, the partial batch response out.
//
// A handler is a function, as small as net/http's: build the host once at
// cold start, make the handler, hand it to lambda.Start.
//
//	h, fn, err := lambda.Build(ctx, cfg, nil, lambda.WithLogger(logger)) // host.New + New, one source
//	...
//	awslambda.Start(fn) // github.com/aws/aws-lambda-go/lambda
//
// Two sources deliver the records, and each reads the response by
// its own record identifier:
//
//   - SourceLambda: a Lambda event source mapping invokes the function with
//     {"Records": [...]} (events.DynamoDBEvent); failed records are named by
//     dynamodb.SequenceNumber.
//   - SourcePipe: an EventBridge Pipe with the function as its target
//     invokes it with a JSON array of the same records (even for a batch of
//     one); failed records are named by eventID.
//
// Both read {"batchItemFailures": [{"itemIdentifier": "..."}]}
// (events.DynamoDBEventResponse). A payload of the other source's shape is
// refused with ErrPayloadShape rather than answered with identifiers its
// reader cannot match.
//
// Either source may read a Kinesis data stream that a table streams its
// changes to (Kinesis Data Streams for DynamoDB) instead of its DynamoDB
// stream: the records are then Kinesis records (eventSource aws:kinesis)
// whose base64 data is the DynamoDB change record, read by
// host/lambdaevents.ParseKinesisRecord and decoded, routed and applied
// like stream records. A failed one is named by its kinesis.sequenceNumber
// for SourceLambda, by its eventID for SourcePipe (the same response
// shape as events.KinesisEventResponse). One event source mapping delivers
// one kind of record, so the handler reads a batch as the kind of its
// first record, and a record of the other kind in it fails alone, saying
// so. Kinesis delivers duplicates and changes out of order; the host takes
// the order from the event store either way.
//
// Each record is parsed on its own: a record that is not a readable stream
// record (or Kinesis data that is not base64 or not a DynamoDB change
// record) fails alone, like a record whose image fails to decode (reported,
// or acknowledged under onDecodeFailure "skip"), not the whole batch. A
// failed record without an identifier fails the invocation with
// host.ErrStreamRecordIdentifierMissing, so the source redelivers the batch.
//
// Records of another shape (a Pipe input template's, say) are not read
// here: use the host library with custom extractors instead.
//
// Each invocation logs one JSON summary line (and one line per failure) and,
// with WithMetrics, writes its metrics in CloudWatch embedded metric format.
//
// A host with hot-swapped plugins has their sources checked
// between invocations, never during one (host.Host.CheckSwaps): an
// invocation checks when it starts, before it reads its batch, if no other
// invocation is in flight, and no swap happens until it has answered. A
// failed check is logged and counted, never returned.
package lambda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynafold/dynafold/host"
)

// The sources a handler serves (the configuration's "source").
const (
	SourceLambda = "lambda" // Lambda event source mapping: identifier dynamodb.SequenceNumber
	SourcePipe   = "pipe"   // EventBridge Pipe target: identifier eventID
)

// ErrPayloadShape is matched by the error of an invocation whose payload is
// not the shape its source delivers: {"Records": [...]} for SourceLambda, a
// JSON array of records for SourcePipe.
var ErrPayloadShape = errors.New("dynafold lambda: unexpected payload shape")

// ErrUnknownSource is matched by the error of New for a source other than
// SourceLambda and SourcePipe.
var ErrUnknownSource = errors.New("dynafold lambda: unknown source")

// Func is the function handed to lambda.Start: the raw invocation payload
// in, the partial batch response out. A non-nil error fails the invocation,
// and the source retries the whole batch.
type Func func(ctx context.Context, payload json.RawMessage) (events.DynamoDBEventResponse, error)

// Invoke implements aws-lambda-go's lambda.Handler, so lambda.Start(fn)
// hands the handler the payload exactly as it came: a payload that is not
// JSON is then answered and logged by the handler (ErrPayloadShape, saying
// what the source sends), where aws-lambda-go's own decoding would fail the
// invocation with a bare JSON error before the handler ran, logging nothing.
func (f Func) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	resp, err := f(ctx, payload)
	if err != nil {
		return nil, err
	}
	return json.Marshal(resp)
}

// Option changes how New builds a handler.
type Option func(*handler)

// WithLogger sets the logger of per-invocation summaries and failures
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(x *handler) { x.log = l } }

// WithMetrics writes each invocation's metrics to w as a CloudWatch
// embedded metric format line (namespace MetricsNamespace,
// dimension Source): records, events, decode failures, applied and
// already-applied events, rows written and failed, lost races, batch item
// failures, duration, the oldest record's age (the iterator age), and, when
// the invocation checked hot-swap sources, the plugin versions swapped in
// and the failed checks; also retries (write attempts beyond the first),
// gap reads and failed records, and the plugin serving each projection as
// the property PluginVersions; with shadow plugins, the rows they compared,
// the rows that differed and the batches they failed on during the
// invocation, with the candidates as the property ShadowPlugins
// (emf_ops.go). In Lambda, w is os.Stdout.
// Default: no metrics.
func WithMetrics(w io.Writer) Option {
	return func(x *handler) {
		x.metrics = nil
		if w != nil {
			x.metrics = &emf{w: w, shadow: map[string]host.ShadowStats{}}
		}
	}
}

// DefaultDeadlineMargin is the time kept back from the invocation's
// deadline to answer with the partial batch response.
const DefaultDeadlineMargin = 500 * time.Millisecond

// WithDeadlineMargin sets the time kept back from the invocation's deadline
// (default DefaultDeadlineMargin): the batch is processed under a context
// that ends that much earlier, so rows still running then fail and are
// reported, and the rows already written are acknowledged, instead of the
// invocation timing out and the whole batch being retried.
func WithDeadlineMargin(d time.Duration) Option { return func(x *handler) { x.margin = max(d, 0) } }

// WithOnDecodeFailure sets what becomes of a record that is not a readable
// stream record: "report" (default) or "skip". Pass the host's
// onDecodeFailure, so these records are treated like records whose image
// fails to decode.
func WithOnDecodeFailure(policy string) Option {
	return func(x *handler) { x.skipBad = policy == "skip" }
}

type handler struct {
	host    *host.Host
	source  string
	log     *slog.Logger
	skipBad bool
	metrics *emf
	margin  time.Duration
	gate    swapGate
}

// New returns the handler running h for source (SourceLambda, or "" for it,
// or SourcePipe). The source must be the one h was configured with
// (Config.Source), since the host picks the identifiers of the response;
// Build takes both from one configuration.
func New(h *host.Host, source string, opts ...Option) (Func, error) {
	source, err := checkSource(source)
	if err != nil {
		return nil, err
	}
	x := newHandler(h, source, opts)
	return x.invoke, nil
}

func newHandler(h *host.Host, source string, opts []Option) *handler {
	x := &handler{host: h, source: source, log: slog.Default(), margin: DefaultDeadlineMargin}
	for _, o := range opts {
		o(x)
	}
	if x.log == nil {
		x.log = slog.Default()
	}
	return x
}

// Build builds the host from cfg (host.New with hostOpts; cfg is not
// modified) and its handler with opts, both with the source of cfg, the
// handler with its onDecodeFailure, and the host with the handler's logger.
// The caller closes the host.
func Build(ctx context.Context, cfg *host.Config, hostOpts []host.Option, opts ...Option) (*host.Host, Func, error) {
	source, err := checkSource(string(cfg.Source))
	if err != nil {
		return nil, nil, err
	}
	c := *cfg
	c.Source = host.Source(source)
	x := newHandler(nil, source, append([]Option{WithOnDecodeFailure(string(c.OnDecodeFailure))}, opts...))
	// No `host run` sweeps a function's outbox: its log lines name a
	// scheduled `host drain-pending` for the effects left pending.
	h, err := host.New(ctx, &c, append([]host.Option{host.WithLogger(x.log), host.WithPendingDelivery(host.PendingByScheduledDrain)}, hostOpts...)...)
	if err != nil {
		return nil, nil, err
	}
	x.host = h
	return h, x.invoke, nil
}

func checkSource(source string) (string, error) {
	switch source {
	case "":
		return SourceLambda, nil
	case SourceLambda, SourcePipe:
		return source, nil
	}
	return "", fmt.Errorf("%w %q: use %q (event source mapping) or %q (EventBridge Pipe target)",
		ErrUnknownSource, source, SourceLambda, SourcePipe)
}

func (x *handler) invoke(ctx context.Context, payload json.RawMessage) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	log := invocationLogger(ctx, x.log, x.source)
	pctx, cancel := x.batchContext(ctx)
	defer cancel()
	// Between invocations: swap in what the plugin sources offer, then hold
	// off every swap until this invocation has answered.
	swapped, end := x.begin(pctx, log)
	defer end()
	raws, err := splitPayload(payload, x.source)
	if err != nil {
		log.Error("invocation failed", "err", err.Error())
		return events.DynamoDBEventResponse{}, err
	}
	recs, bad, err := parseRecords(raws, x.source)
	if err != nil {
		log.Error("invocation failed", "err", err.Error())
		return events.DynamoDBEventResponse{}, err
	}
	throttledBefore := throttled(x.host)
	res, err := x.host.ProcessBatch(pctx, recs)
	x.explainDeadline(pctx, res)
	var out events.DynamoDBEventResponse
	if err == nil {
		for _, b := range bad {
			if b.report && !x.skipBad {
				res.Fail(b.pos)
			}
		}
		var resp host.Response
		if resp, err = res.Response(); err == nil {
			out = toEvents(resp)
		}
	}
	if res != nil {
		s := summarize(res, bad, out, time.Since(start), oldest(recs))
		s.HotSwap, s.PluginSwaps, s.PluginSwapFailures = swapped.checked, swapped.swaps, swapped.failures
		s.Throttled = throttled(x.host) - throttledBefore
		logBatch(log, res, bad, x.skipBad, s)
		if x.metrics != nil {
			if merr := x.metrics.write(x.source, s, opsOf(x.host, res, len(out.BatchItemFailures)), time.Now()); merr != nil {
				log.Warn("writing metrics", "err", merr.Error())
			}
			if merr := x.metrics.writeProjections(x.source, x.host, res, time.Now()); merr != nil {
				log.Warn("writing metrics", "err", merr.Error())
			}
		}
	}
	if err != nil {
		log.Error("invocation failed: the source retries the whole batch", "err", err.Error())
		return events.DynamoDBEventResponse{}, err
	}
	return out, nil
}

// throttled is the number of DynamoDB request attempts h's client saw
// throttled so far (one invocation at a time: the difference around a
// batch is that batch's).
func throttled(h *host.Host) int64 {
	var n int64
	for _, c := range h.ThrottledRequests() {
		n += c
	}
	return n
}

func toEvents(r host.Response) events.DynamoDBEventResponse {
	out := events.DynamoDBEventResponse{BatchItemFailures: make([]events.DynamoDBBatchItemFailure, len(r.BatchItemFailures))}
	for i, f := range r.BatchItemFailures {
		out.BatchItemFailures[i] = events.DynamoDBBatchItemFailure{ItemIdentifier: f.ItemIdentifier}
	}
	return out
}
