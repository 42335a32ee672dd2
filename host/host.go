// Package host is the dynafold projection host as a library: it loads a
// configuration, connects to DynamoDB, loads each projection's plugin and
// runs change-feed batches through decode → route → apply, answering with
// the partial batch response.
//
//	cfg, _ := host.LoadConfig("dynafold.json")
//	h, _ := host.New(ctx, cfg)
//	res, _ := h.ProcessBatch(ctx, records)
//	resp, _ := res.Response()
//
// The stages are internal packages (host/internal/...); Record, Result and
// Outcome are this package's own. The Lambda handler is host/lambda; the
// plugin runtime is host/plugin, hot swap host/swap.
package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/batch"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/ratelimit"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/host/plugin/extism/transport"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// Host runs the configured projections.
type Host struct {
	cfg     *Config
	db      *dynamo.DB
	es      *eventstore.Store
	streams map[string]eventstore.Stream
	engines map[string]*apply.Engine
	order   []string
	logics  []logic.Logic
	swaps   []*hotSwap
	swapMu  sync.Mutex // serializes CheckSwaps
	proc    *batch.Processor
	log     *slog.Logger

	outboxes map[string]*projectionOutbox // drainer and target of each projection with an outbox
	opts     options                      // how New built the host, for engines built later
	dopts    decode.Options               // the decoder options of the batch processors
	shadows  shadowSet                    // candidate plugins beside the live ones
	paused   pauseSet                     // projections whose events are left unapplied (Pause)
	breakers map[string]*deliver.Breaker  // by projection: the breaker in front of its delivery target
	bg       *background                  // WithBackgroundDelivery: the deliveries off the batch's path
}

// Option changes how New builds a Host.
type Option func(*options)

type options struct {
	native map[string]logic.Logic
	client *dynamodb.Client
	log    *slog.Logger
	now    func() time.Time
	shape  *RecordShape
	esOnly bool

	deliver    deliver.Target  // WithDeliver
	sweepEvery time.Duration   // WithOutboxSweep
	pending    PendingDelivery // WithPendingDelivery
	background int             // WithBackgroundDelivery: rows delivering at once (0: deliver inline)
	// sourcesOf finds a row's stream instances, by projection (WithSourcesOf)
	sourcesOf map[string]SourcesOf
	calls     CallObserver
	codecs    []namedCodec
	limitClk  ratelimit.Clock // WithRateLimitClock
	// noOutputCheck turns off the check of the plugins' output, for the
	// benchmark that measures its cost only (export_test.go).
	noOutputCheck bool
}

// RecordShape reads records of a shape other than Record, for
// ProcessRawBatch: Image returns the item an event is read from (false: the
// record carries none and is ignored), Identifier the record's identifier
// for the partial batch response.
type RecordShape struct {
	Image      func(raw any) (abi.Item, bool)
	Identifier func(raw any) string
}

// WithRecordShape sets the extractors ProcessRawBatch reads records with.
func WithRecordShape(s RecordShape) Option { return func(o *options) { o.shape = &s } }

// WithNative registers logic that a projection names as "native:<name>".
func WithNative(name string, l logic.Logic) Option {
	return func(o *options) { o.native[name] = l }
}

// WithClient makes the host use client instead of building one from the
// configuration's endpoint and region. Build it with KeepConnections and
// enough idle connections per host (two per row of concurrency), as the
// host's own client has. The host's own client sends its reads and writes
// of items straight to the wire (the SDK's credentials, signing and
// retries, without its per-request middleware: about half the CPU per
// request); a client given here goes through the SDK's middleware, any of
// yours included.
func WithClient(c *dynamodb.Client) Option { return func(o *options) { o.client = c } }

// KeepConnections is an option of dynamodb.New / dynamodb.NewFromConfig
// that keeps a connection open after a request the server answered while
// net/http was still finishing its body: without it the AWS SDK's request
// body makes net/http close about 1 connection in 5 to 10 after a
// successful request, and the next request pays a new one (TCP and TLS
// handshakes). The host's own client has it.
func KeepConnections(o *dynamodb.Options) { ddbclient.KeepConnections(o) }

// WithEventStoreOnly makes a host that loads no plugin and runs no
// projection: for appending events, reading streams and building the
// filter criteria, whatever projections the configuration lists.
func WithEventStoreOnly() Option { return func(o *options) { o.esOnly = true } }

// WithLogger sets the host's logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithRateLimitClock sets the clock of the projections' rate limits
// (rateLimit): now is the time they read, sleep how they wait (it returns
// ctx's error when ctx ends first). Tests pass a clock they advance as the
// limiter sleeps; the default is the real one.
func WithRateLimitClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(o *options) { o.limitClk = ratelimit.Clock{Now: now, Sleep: sleep} }
}

// WithClock sets the clock used for createdAt, event timestamps, the
// commit times freshness is measured to, outbox claims and delivery
// breakers.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// New connects to DynamoDB, loads every projection's plugin and validates
// the configuration against what the plugins describe.
func New(ctx context.Context, cfg *Config, opts ...Option) (_ *Host, err error) {
	o := options{native: map[string]logic.Logic{}, log: slog.Default(), now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !o.esOnly {
		if err := cfg.RequireProjections(); err != nil {
			return nil, err
		}
	}
	cfg = cfg.Effective() // every default, from one place
	h := &Host{cfg: cfg, streams: map[string]eventstore.Stream{}, engines: map[string]*apply.Engine{}, log: o.log}
	defer func() {
		if err != nil {
			_ = h.Close(ctx)
		}
	}()
	client := o.client
	if client == nil {
		if client, err = ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Region, ddbclient.WithIdleConns(cfg.idleConns())); err != nil {
			return nil, fmt.Errorf("DynamoDB client: %w", err)
		}
	}
	h.db = dynamo.New(client)
	var streams []eventstore.Stream
	for _, s := range cfg.EventStore.Streams {
		st := eventstore.Stream{Name: s.Name, EventTypes: s.EventTypes, Composite: s.Composite}
		h.streams[s.Name] = st
		streams = append(streams, st)
	}
	layout := eventstore.DefaultLayout(cfg.EventStore.Schema, cfg.EventStore.SchemaVersion)
	if layout.Codecs, err = o.codecRegistry(); err != nil {
		return nil, err
	}
	if h.es, err = eventstore.New(h.db, cfg.EventStore.Table, layout, eventstore.WithClock(o.now),
		eventstore.WithPacking(cfg.EventStore.Compression.packing())); err != nil {
		return nil, err
	}
	dec, err := layout.NewDecoder(streams...)
	if err != nil {
		return nil, err
	}
	var engines []*apply.Engine
	for _, pc := range cfg.Projections {
		if o.esOnly {
			break
		}
		e, err := h.newEngine(ctx, pc, o, h.db)
		if err != nil {
			if prefix := fmt.Sprintf("projection %q", pc.Name); !strings.HasPrefix(err.Error(), prefix) {
				err = fmt.Errorf("%s: %w", prefix, err)
			}
			return nil, err
		}
		h.engines[pc.Name] = e
		h.order = append(h.order, pc.Name)
		engines = append(engines, e)
	}
	dopts := decode.Options{Decoder: dec, Source: decode.Source(cfg.Source), OnDecodeFailure: decode.FailurePolicy(cfg.OnDecodeFailure)}
	if o.shape != nil {
		dopts.Image, dopts.Identifier = o.shape.Image, o.shape.Identifier
	}
	if h.proc, err = batch.New(dopts, engines, cfg.SideEffectStreams); err != nil {
		return nil, err
	}
	h.proc.Paused = h.paused.is
	h.proc.Obsolete = h.obsolete
	h.opts, h.dopts = o, dopts
	if !o.esOnly {
		if err := h.newShadows(ctx, dopts, o); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (h *Host) newEngine(ctx context.Context, pc ProjectionConfig, o options, db store.DB) (*apply.Engine, error) {
	l, err := h.loadLogic(ctx, pc, o)
	if err != nil {
		return nil, err
	}
	l = o.observed(pc.Name, l)
	d := l.Describe()
	var sources []apply.Source
	for _, s := range d.Sources {
		if _, ok := h.streams[s.Stream]; !ok {
			return nil, fmt.Errorf("plugin %s reads stream %q, which eventStore.streams does not define", d.Name, s.Stream)
		}
		sources = append(sources, apply.Source{Name: s.Name, Stream: s.Stream, Mode: s.Mode})
	}
	if err := checkSourceNames(pc, d); err != nil {
		return nil, err
	}
	if err := h.checkComposites(d); err != nil {
		return nil, err
	}
	p := apply.Projection{
		Name: pc.Name, Table: pc.Table, KeyAttrs: pc.Key, Sources: sources, Logic: l,
		Checkpoint: apply.Checkpoint{Field: pc.Checkpoint.Field, Offset: pc.Checkpoint.Offset, InstanceField: pc.Checkpoint.InstanceField, Map: pc.Checkpoint.Map, Sources: sourceCheckpoints(pc.Checkpoint.Sources)},
		CreatedAt:  pc.CreatedAtAttribute(), WrittenBy: pc.WrittenBy, Rows: pc.Concurrency,
		// a shadow's or what-if's store does not check a write's condition:
		// their engines read every row first, as a new row's write without
		// a read relies on it
		ReadNewRows: pc.ReadNewRows || db != store.DB(h.db),
		Retry:       apply.Retry{Attempts: pc.Retry.Attempts, Base: time.Duration(pc.Retry.Base), Max: time.Duration(pc.Retry.Max)},
		Now:         o.now, Logger: h.log.With("projection", pc.Name),
		NoOutputCheck: o.noOutputCheck,
	}
	if rl := pc.RateLimit; rl != nil && db == store.DB(h.db) {
		// only the live engine waits: a shadow or what-if engine writes nothing
		if lim := ratelimit.New(rl.EventsPerSecond, rl.WritesPerSecond, rl.Burst, o.limitClk); lim != nil {
			p.Limit = lim
		}
	}
	if f := o.sourcesOf[pc.Name]; f != nil {
		p.SourcesOf = f.engine()
	}
	if pc.Revision != nil {
		p.Revision = &apply.Revision{Field: pc.Revision.Field, Initial: pc.Revision.Initial}
	}
	if pc.Removal != nil {
		p.Removal = &apply.Removal{EntityType: pc.ReadModel.EntityType, TTL: time.Duration(pc.Removal.TTL), TTLAttribute: pc.Removal.TTLAttribute}
	}
	// Only the live engine has an outbox: a shadow or what-if engine
	// writes nothing, so it commits and delivers no effects either.
	if db == store.DB(h.db) {
		if err := h.setOutbox(ctx, pc, &p, o); err != nil {
			return nil, err
		}
	}
	return apply.New(p, db, storeReader{h})
}

func (h *Host) loadLogic(ctx context.Context, pc ProjectionConfig, o options) (logic.Logic, error) {
	if name, ok := strings.CutPrefix(pc.Plugin, "native:"); ok {
		l := o.native[name]
		if l == nil {
			return nil, fmt.Errorf("plugin %q: no native logic registered under %q (host.WithNative)", pc.Plugin, name)
		}
		return l, nil
	}
	start := time.Now()
	if pc.HotSwap != nil {
		hs, err := h.cfg.newHotSwap(ctx, pc, h.log)
		if err != nil {
			return nil, err
		}
		h.swaps = append(h.swaps, hs)
		cur := hs.swapper.Current()
		h.log.Info("plugin loaded", "projection", pc.Name, "plugin", cur.Plugin, "sha256", shortSHA(cur.SHA256),
			"origin", cur.Origin, "elapsed", time.Since(start).Round(time.Millisecond).String())
		return hs.swapper, nil
	}
	path := pc.Plugin
	if !filepath.IsAbs(path) && h.cfg.dir != "" {
		path = filepath.Join(h.cfg.dir, path)
	}
	// The module's imports tell its transport: the raw dynafold ABI, or an
	// Extism PDK plugin.
	p, _, err := transport.LoadFile(ctx, path, h.cfg.pluginConfig(pc.Name, h.log))
	if err != nil {
		return nil, err
	}
	h.logics = append(h.logics, p)
	h.log.Info("plugin loaded", "projection", pc.Name, "plugin", p.Name(), "sha256", shortSHA(p.SHA256()),
		"elapsed", time.Since(start).Round(time.Millisecond).String())
	return p, nil
}

// shortSHA is a digest's first 12 hex digits, as logs show it.
func shortSHA(sha string) string { return sha[:min(12, len(sha))] }

// storeReader adapts the event store to the engine's EventReader.
type storeReader struct{ h *Host }

func (r storeReader) ReadFrom(ctx context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error) {
	s, ok := r.h.streams[stream]
	if !ok {
		return nil, fmt.Errorf("stream %q is not configured", stream)
	}
	evs, err := r.h.es.ReadFrom(ctx, s, streamID, after, to)
	if errors.Is(err, eventstore.ErrDecode) {
		err = badEventItem{err}
	}
	return evs, err
}

// badEventItem is an event store read that met an item that is not a valid
// event: it matches apply.ErrBadEventItem as well as its own error.
type badEventItem struct{ err error }

func (e badEventItem) Error() string   { return e.err.Error() }
func (e badEventItem) Unwrap() []error { return []error{e.err, apply.ErrBadEventItem} }

// ProcessBatch runs one batch of change-feed records through every
// projection and returns what it did; its Response method gives the partial
// batch response. The error is set only when the whole invocation must fail
// (ErrStreamRecordIdentifierMissing).
func (h *Host) ProcessBatch(ctx context.Context, records []Record) (*Result, error) {
	recs := internalRecords(records)
	runs := h.runShadows(ctx, func(p *batch.Processor) (*batch.Result, error) { return p.Process(ctx, recs) })
	res, err := h.proc.Process(ctx, recs)
	h.compareShadows(runs, res)
	return resultOf(res), err
}

// ProcessRawBatch is ProcessBatch for records of any shape, read through the
// extractors of WithRecordShape; Record values (and pointers) are read as
// such when no extractor is set.
func (h *Host) ProcessRawBatch(ctx context.Context, records []any) (*Result, error) {
	raw := make([]any, len(records))
	for i, r := range records {
		switch v := r.(type) {
		case Record:
			raw[i] = v.internal()
		case *Record:
			if v != nil {
				raw[i] = v.internal()
			}
		default:
			raw[i] = r
		}
	}
	runs := h.runShadows(ctx, func(p *batch.Processor) (*batch.Result, error) { return p.ProcessRaw(ctx, raw) })
	res, err := h.proc.ProcessRaw(ctx, raw)
	h.compareShadows(runs, res)
	return resultOf(res), err
}

// PluginVersion returns the name and version of the plugin serving a
// projection now (a hot-swapped plugin's changes when a new version is
// swapped in).
func (h *Host) PluginVersion(projection string) (name, version string, err error) {
	e, err := h.engine(projection)
	if err != nil {
		return "", "", err
	}
	d := e.Projection().Logic.Describe()
	return d.Name, d.Version, nil
}

// Projections returns the projections' names in configuration order.
func (h *Host) Projections() []string { return append([]string(nil), h.order...) }

// Watch follows the sources of the hot-swapped plugins until ctx ends:
// a long-running host runs it beside its change-feed reader.
func (h *Host) Watch(ctx context.Context) error { return watchAll(ctx, h.swaps...) }

// Close releases the plugins.
func (h *Host) Close(ctx context.Context) error {
	if h.bg != nil {
		h.bg.close(ctx) // before the plugins go: nothing of theirs is called, but the target is
	}
	var errs []error
	for _, hs := range h.swaps {
		errs = append(errs, hs.close(ctx))
	}
	h.swaps = nil
	for _, l := range h.logics {
		errs = append(errs, l.Close(ctx))
	}
	h.logics = nil
	return errors.Join(errs...)
}

// FilterCriteria returns the FilterCriteria JSON that keeps only the
// configured streams' event INSERTs, for an event source mapping
// or a Pipe.
func (h *Host) FilterCriteria() ([]byte, error) {
	return h.es.Layout().FilterCriteria(h.configuredStreams()...)
}

// KinesisFilterCriteria returns the FilterCriteria JSON that keeps only the
// configured streams' event INSERTs from a Kinesis data stream the event
// table streams its changes to (Kinesis Data Streams for DynamoDB): the
// same conditions, on the change record in each Kinesis record's data.
func (h *Host) KinesisFilterCriteria() ([]byte, error) {
	return h.es.Layout().KinesisFilterCriteria(h.configuredStreams()...)
}

func (h *Host) configuredStreams() []eventstore.Stream {
	streams := make([]eventstore.Stream, 0, len(h.cfg.EventStore.Streams))
	for _, s := range h.cfg.EventStore.Streams {
		streams = append(streams, h.streams[s.Name])
	}
	return streams
}
