// Package handler is dynafold's AWS Lambda function handler (SPEC H1): a
// DynamoDB stream event in, the partial batch response out.
//
// A handler is a function, as small as net/http's: build the host once at
// cold start, make the handler, hand it to lambda.Start.
//
//	h, fn, err := handler.Build(ctx, cfg, logger) // host.New + New, one source
//	...
//	lambda.Start(fn)
//
// Two sources deliver the records (SPEC B2), and each reads the response by
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
// Each record is parsed on its own: a record that is not a readable stream
// record fails alone, like a record whose image fails to decode (reported,
// or acknowledged under onDecodeFailure "skip"), not the whole batch. A
// failed record without an identifier fails the invocation with
// batch.ErrStreamRecordIdentifierMissing, so the source redelivers the batch
// (SPEC B3).
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/batch"
	"github.com/dynafold/dynafold/host/decode"
)

// The sources a handler serves (the configuration's "source").
const (
	SourceLambda = string(decode.SourceLambda) // Lambda event source mapping: identifier dynamodb.SequenceNumber
	SourcePipe   = string(decode.SourcePipe)   // EventBridge Pipe target: identifier eventID
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

// Option changes how New builds a handler.
type Option func(*handler)

// WithLogger sets the logger of per-invocation summaries and failures
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(x *handler) { x.log = l } }

// WithOnDecodeFailure sets what becomes of a record that is not a readable
// stream record: "report" (default) or "skip". Pass the host's
// onDecodeFailure, so these records are treated like records whose image
// fails to decode (SPEC B4).
func WithOnDecodeFailure(policy string) Option {
	return func(x *handler) { x.skipBad = decode.FailurePolicy(policy) == decode.OnFailureSkip }
}

type handler struct {
	host    *host.Host
	source  string
	log     *slog.Logger
	skipBad bool
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
	x := &handler{host: h, source: source, log: slog.Default()}
	for _, o := range opts {
		o(x)
	}
	return x.invoke, nil
}

// Build builds the host from cfg (host.New with hostOpts; cfg is not
// modified) and its handler, both with the source of cfg, and the handler
// with its onDecodeFailure. The caller closes the host.
func Build(ctx context.Context, cfg *host.Config, log *slog.Logger, hostOpts ...host.Option) (*host.Host, Func, error) {
	if log == nil {
		log = slog.Default()
	}
	source, err := checkSource(cfg.Source)
	if err != nil {
		return nil, nil, err
	}
	c := *cfg
	c.Source = source
	h, err := host.New(ctx, &c, append([]host.Option{host.WithLogger(log)}, hostOpts...)...)
	if err != nil {
		return nil, nil, err
	}
	fn, err := New(h, source, WithLogger(log), WithOnDecodeFailure(c.OnDecodeFailure))
	if err != nil {
		_ = h.Close(ctx)
		return nil, nil, err
	}
	return h, fn, nil
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
	raws, err := splitPayload(payload, x.source)
	if err != nil {
		log.Error("invocation failed", "err", err.Error())
		return events.DynamoDBEventResponse{}, err
	}
	recs, bad := parseRecords(raws)
	res, err := x.host.ProcessBatch(ctx, recs)
	if err == nil {
		for _, b := range bad {
			if b.report && !x.skipBad {
				res.Fail(b.pos)
			}
		}
		var resp batch.Response
		if resp, err = res.Response(); err == nil {
			out := toEvents(resp)
			logBatch(log, res, bad, x.skipBad, out, time.Since(start), oldest(recs))
			return out, nil
		}
	}
	if res != nil {
		logBatch(log, res, bad, x.skipBad, events.DynamoDBEventResponse{}, time.Since(start), oldest(recs))
	}
	log.Error("invocation failed: the source retries the whole batch", "err", err.Error())
	return events.DynamoDBEventResponse{}, err
}

func toEvents(r batch.Response) events.DynamoDBEventResponse {
	out := events.DynamoDBEventResponse{BatchItemFailures: make([]events.DynamoDBBatchItemFailure, len(r.BatchItemFailures))}
	for i, f := range r.BatchItemFailures {
		out.BatchItemFailures[i] = events.DynamoDBBatchItemFailure{ItemIdentifier: f.ItemIdentifier}
	}
	return out
}
