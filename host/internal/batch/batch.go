// Package batch is processBatch: it decodes a change-feed batch
// once, routes every event to each projection of its stream, applies them,
// and builds the partial batch response — the earliest record of every
// failed row and every record that failed to decode.
package batch

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/internal/route"
)

// Processor runs batches through a set of projections.
type Processor struct {
	opts    decode.Options
	engines []*apply.Engine
	router  *route.Table

	// Paused, when set, reports the projections paused for a batch: their
	// events are not applied but returned in their Result's Deferred.
	Paused func(projection string) bool
	// Obsolete, when set, is asked about each record that failed to decode
	// (and is not skipped) with an image: true when the event table no
	// longer holds that item as the record shows it. Such a record is not
	// failed: when the item was corrected into an event (corrected, the
	// event at the record's position), that event is the record's and is
	// applied (Result.Corrected); otherwise the record moves to
	// Result.Obsolete. Only failing records are asked.
	Obsolete func(ctx context.Context, f decode.DecodeFailure) (obsolete bool, corrected *decode.Event)
}

// New returns a processor for the engines. sideEffects names streams whose
// decoded events come back in Result.Unrouted.
func New(opts decode.Options, engines []*apply.Engine, sideEffects []string) (*Processor, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	streams := map[string][]string{}
	for _, e := range engines {
		name := e.Projection().Name
		if _, dup := streams[name]; dup {
			return nil, fmt.Errorf("batch: two projections named %q", name)
		}
		streams[name] = e.Streams()
	}
	return &Processor{opts: opts, engines: engines, router: route.New(streams, sideEffects)}, nil
}

// Result is the outcome of one batch.
type Result struct {
	Records     int                     // records in the batch
	Decoded     decode.Result           // what decoding made of them
	Projections map[string]apply.Result // each projection's outcomes, by name
	Unrouted    []route.Event           // events of streams named for side effects
	// Obsolete are the records that failed to decode but whose item the
	// event table no longer holds as they show it (Processor.Obsolete):
	// passed over, in record order, not in Decoded.Failures.
	Obsolete []decode.DecodeFailure
	// Corrected are the records that failed to decode but whose item was
	// corrected since into an event (Processor.Obsolete): that event is
	// in Decoded.Events at the record's position, and applied as the
	// record's. In record order, not in Decoded.Failures.
	Corrected []decode.DecodeFailure
	// Failed holds the positions of the records to report failed. Callers
	// may add more and call Response again.
	Failed []int

	ids map[int]string
}

// Process decodes, routes and applies a batch of standard records.
func (p *Processor) Process(ctx context.Context, records []decode.Record) (*Result, error) {
	return p.run(ctx, len(records), decode.Decode(records, p.opts))
}

// ProcessRaw does the same for records of any shape read through the
// options' Image and Identifier extractors.
func (p *Processor) ProcessRaw(ctx context.Context, records []any) (*Result, error) {
	return p.run(ctx, len(records), decode.DecodeRaw(records, p.opts))
}

func (p *Processor) run(ctx context.Context, n int, dec decode.Result) (*Result, error) {
	res := &Result{Records: n, Decoded: dec, Projections: make(map[string]apply.Result, len(p.engines)),
		ids: make(map[int]string, len(dec.Events)+len(dec.Failures)+len(dec.Ignored))}
	for _, f := range res.Decoded.Failures {
		res.ids[f.Position] = f.Identifier
	}
	if len(dec.Failures) > 0 && p.Obsolete != nil {
		var corrected []decode.Event
		res.Decoded.Failures, res.Obsolete, res.Corrected, corrected = p.passOver(ctx, dec.Failures)
		if len(corrected) > 0 {
			res.Decoded.Events = mergeEvents(res.Decoded.Events, corrected)
		}
		dec = res.Decoded
	}
	events := make([]route.Event, 0, len(dec.Events))
	for _, ev := range dec.Events {
		res.ids[ev.Position] = ev.Identifier
		events = append(events, route.Event{Pos: ev.Position, Event: ev.Event})
	}
	for _, f := range dec.Failures {
		if !f.Skipped {
			res.Failed = append(res.Failed, f.Position)
		}
	}
	for _, ig := range dec.Ignored {
		res.ids[ig.Position] = ig.Identifier
	}
	routed := p.router.Route(events)
	res.Unrouted = routed.Unrouted
	// The projections apply the batch at once: their rows are independent,
	// so a batch costs the round trips of its slowest projection, not their
	// sum.
	results := make([]apply.Result, len(p.engines))
	var wg sync.WaitGroup
	for i, e := range p.engines {
		name := e.Projection().Name
		if p.Paused != nil && p.Paused(name) {
			results[i] = apply.Result{Projection: name, Paused: true, Deferred: routed.ByProjection[name]}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.ApplyBatch(ctx, routed.ByProjection[name])
		}()
	}
	wg.Wait()
	for i, e := range p.engines {
		name := e.Projection().Name
		r := results[i]
		res.Projections[name] = r
		for _, row := range r.Rows {
			// A failed row, or a failed instance whose events the row's
			// write left out: its earliest record goes back to the source.
			res.Failed = append(res.Failed, row.FailedPositions()...)
		}
		for _, kf := range r.KeyFailures {
			if kf.Pos >= 0 {
				res.Failed = append(res.Failed, kf.Pos)
			}
		}
	}
	if _, err := res.Response(); err != nil {
		return res, err
	}
	return res, nil
}

// obsoleteChecks bounds the reads of the event table one batch makes at
// once for its failed records.
const obsoleteChecks = 8

// passOver asks Obsolete about each failure that is reported and has an
// image, a few at once, and splits the failures into those still failed,
// the obsolete ones, and the corrected ones with their events, each in
// record order.
func (p *Processor) passOver(ctx context.Context, fs []decode.DecodeFailure) (failed, obsolete, corrected []decode.DecodeFailure, events []decode.Event) {
	gone := make([]bool, len(fs))
	now := make([]*decode.Event, len(fs))
	sem := make(chan struct{}, obsoleteChecks)
	var wg sync.WaitGroup
	for i := range fs {
		if fs[i].Skipped || fs[i].Image == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			gone[i], now[i] = p.Obsolete(ctx, fs[i])
		}()
	}
	wg.Wait()
	for i, f := range fs {
		switch {
		case !gone[i]:
			failed = append(failed, f)
		case now[i] != nil:
			corrected = append(corrected, f)
			events = append(events, *now[i])
		default:
			obsolete = append(obsolete, f)
		}
	}
	return failed, obsolete, corrected, events
}

// mergeEvents merges two lists of events in record order into one.
func mergeEvents(a, b []decode.Event) []decode.Event {
	out := make([]decode.Event, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Position < b[0].Position {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// ErrStreamRecordIdentifierMissing is matched by the error of a batch with a
// failed record that has no identifier: an empty identifier would make the
// source fail the whole batch silently, so the call fails instead and the
// source redelivers the batch.
var ErrStreamRecordIdentifierMissing = errors.New("StreamRecordIdentifierMissing")

// Response is the partial batch response Lambda and Pipes read.
type Response struct {
	BatchItemFailures []ItemFailure `json:"batchItemFailures"`
}

// ItemFailure names one failed record.
type ItemFailure struct {
	ItemIdentifier string `json:"itemIdentifier"`
}

// Fail adds records to report failed, by position.
func (r *Result) Fail(positions ...int) { r.Failed = append(r.Failed, positions...) }

// Response builds the partial batch response from Failed, in record order.
func (r *Result) Response() (Response, error) {
	ps := append([]int(nil), r.Failed...)
	sort.Ints(ps)
	resp := Response{BatchItemFailures: []ItemFailure{}}
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		id := r.ids[p]
		if id == "" {
			return resp, fmt.Errorf("%w: record %d failed but has no identifier (dynamodb.SequenceNumber for Lambda, eventID for Pipes); failing the whole invocation so the source redelivers the batch", ErrStreamRecordIdentifierMissing, p)
		}
		resp.BatchItemFailures = append(resp.BatchItemFailures, ItemFailure{ItemIdentifier: id})
	}
	return resp, nil
}

// Identifier returns the identifier of the record at position p.
func (r *Result) Identifier(p int) string { return r.ids[p] }
