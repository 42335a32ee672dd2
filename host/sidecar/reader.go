package sidecar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go/middleware"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/feed"
	"github.com/dynafold/dynafold/host/internal/lease"
	"github.com/dynafold/dynafold/host/quarantine"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// ErrAbandoned, as the cause of Run's context (context.WithCancelCause),
// stops the reader at once, as a crashed process would: the batch in flight
// is cut short, nothing is checkpointed and no lease is released, so other
// workers take the shards over once the leases expire. For fault drills and
// tests; a plain cancellation stops gracefully.
var ErrAbandoned = errors.New("sidecar: abandoned without cleanup")

// StreamsAPI is the part of the DynamoDB Streams client the reader calls;
// *dynamodbstreams.Client implements it.
type StreamsAPI interface {
	ListStreams(ctx context.Context, in *dynamodbstreams.ListStreamsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.ListStreamsOutput, error)
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// DestinationFunc builds the on-failure destination a projection's policy
// names. The default one (FileDestinations) serves "file" only; the
// DynamoDB-table and SQS destinations plug in here.
type DestinationFunc func(ctx context.Context, projection string, c host.OnFailureConfig) (quarantine.Destination, error)

// FileDestinations is the default DestinationFunc: a JSON-lines file for
// "file", an error for the other kinds.
func FileDestinations(_ context.Context, _ string, c host.OnFailureConfig) (quarantine.Destination, error) {
	if c.File != "" {
		return quarantine.NewFile(c.File), nil
	}
	return nil, fmt.Errorf("the default on-failure destinations are files only: set onFailure.file, or build the reader with Options.Destinations for a table or a queue (host run does)")
}

// Options are what the reader is built with besides the host and its
// configuration; the zero value takes the defaults.
type Options struct {
	// Observer is told what the reader does (metrics, status page;
	// default NopObserver).
	Observer Observer
	// Logger logs leases taken and lost, failures and given-up records
	// (default slog.Default()).
	Logger *slog.Logger
	// DynamoDB is the client of the lease table (default: built from the
	// configuration's endpoint and region).
	DynamoDB *dynamodb.Client
	// Streams is the DynamoDB Streams client (default: built likewise).
	Streams StreamsAPI
	// Kinesis is the Kinesis client, used when the sidecar section names
	// a Kinesis data stream (default: built from sidecar.kinesis.endpoint,
	// AWS_ENDPOINT_URL_KINESIS or the local DynamoDB endpoint, and the
	// region).
	Kinesis KinesisAPI
	// Destinations builds the on-failure destinations (default
	// FileDestinations).
	Destinations DestinationFunc
	// Status, when set, is the freshness this worker publishes in the
	// lease table once per full lease round, for `host status`
	// (telemetry.Metrics.FreshnessReports).
	Status func() []host.FreshnessReport
	// SweepEvery is how often the fleet's sweeper (the worker holding
	// the lowest shard lease) delivers each projection's outbox effects
	// that no live drainer holds (Host.SweepOutbox): 0 takes
	// Host.OutboxSweepEvery (outbox.claimFor unless host.WithOutboxSweep
	// says otherwise); a negative interval sweeps never.
	SweepEvery time.Duration
}

// Stats are the reader's running totals, for progress lines.
type Stats struct {
	Records  int64 // records done: folded (or passed over), or given up; a record delivered again counts once
	Written  int64 // rows written
	Failures int64 // records reported failed by a batch, at each delivery (dynafold_records_failed_total counts the same)
	GivenUp  int64 // records given up to the on-failure destination
	Shards   int   // leases held now
	// Behind is the lag, as `host status` tells it: the age of the oldest
	// record not yet done (so not yet checkpointed), the largest over the
	// shards held; 0 when none waits.
	Behind time.Duration
	// HeldBack is the number of shards held now whose oldest record not
	// yet done failed and is delivered again: the shard waits behind it.
	HeldBack  int
	StreamArn string // the stream read
}

// readLag is what a shard's reader tells of its lag (Stats).
type readLag struct {
	oldest time.Time // when the oldest record not yet done was written; zero when none waits
	held   bool      // that record failed and is delivered again
}

// Reader reads the event table's stream for a host.
type Reader struct {
	h      *host.Host
	cfg    *host.Config
	sc     host.SidecarConfig
	opts   Options
	log    *slog.Logger
	obs    Observer
	leases *lease.Table
	api    StreamsAPI
	kin    KinesisAPI // set when the sidecar section names a Kinesis data stream

	instance string // this process's token in the leases it holds
	dupes    dupes
	// afterCheck, when set (by tests), runs once the check of the worker
	// id at start passed, before the first lease round.
	afterCheck func()
	// ageClock is the clock of the failure policy's record ages
	// (maxRecordAge; default time.Now): tests jump it.
	ageClock func() time.Time

	mu         sync.Mutex
	held       map[string]*held
	kick       chan struct{}   // a shard finished: run a quick lease round now, for its children
	listed     map[string]bool // the shards of the stream's last full listing, and children found since
	nextExpiry time.Time       // when a lease of another worker expires unless renewed
	dests      map[string]quarantine.Destination
	arn        string
	fatal      error
	records    atomic.Int64
	written    atomic.Int64
	failures   atomic.Int64
	passed     passedAgain // failures that went through when delivered again
	// misreadWarned is set once the reader warned that the configuration
	// cannot read its rows (warnMisread)
	misreadWarned atomic.Bool
	givenUp       atomic.Int64
	lags          sync.Map          // shard -> readLag
	waiting       map[string]string // shard -> the other owner noteWaiting logged (lease rounds only)
	pause         pauses            // the lease table's pauses and deferred instances (pause.go)
	sweeper       atomic.Bool       // this worker sweeps the outboxes (it holds the lowest lease, as of the last lease round)
	foreign       map[string]bool   // other streams whose leases the lease table was seen to hold (logged once each)
	noTables      map[string]bool   // tables found missing by a delivery, warned of once each until one gets past (policy.go)
}

// New returns a reader of cfg's event-table stream that hands each batch
// to h. cfg must have a sidecar section (its lease table).
func New(ctx context.Context, h *host.Host, cfg *host.Config, opts Options) (*Reader, error) {
	if cfg.Sidecar == nil {
		return nil, errors.New(`configuration: no "sidecar" section: add one with at least "leaseTable", the DynamoDB table for the reader's leases`)
	}
	r := &Reader{h: h, cfg: cfg, sc: cfg.EffectiveSidecar(), opts: opts, held: map[string]*held{}, kick: make(chan struct{}, 1), dests: map[string]quarantine.Destination{},
		waiting: map[string]string{}, listed: map[string]bool{}, foreign: map[string]bool{}, noTables: map[string]bool{}, instance: newInstance(time.Now()), ageClock: time.Now}
	r.dupes.r = r
	r.log, r.obs = opts.Logger, opts.Observer
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.obs == nil {
		r.obs = NopObserver{}
	}
	if r.opts.Destinations == nil {
		r.opts.Destinations = FileDestinations
	}
	client, api, err := clients(ctx, cfg, opts.DynamoDB, opts.Streams)
	if err != nil {
		return nil, err
	}
	r.leases = lease.NewTable(client, r.sc.LeaseTable)
	r.api = api
	if r.kin, err = kinesisClient(ctx, cfg, opts.Kinesis); err != nil {
		return nil, err
	}
	return r, nil
}

// clients returns the given clients, or builds them from the
// configuration's endpoint and region.
func clients(ctx context.Context, cfg *host.Config, client *dynamodb.Client, api StreamsAPI) (*dynamodb.Client, StreamsAPI, error) {
	if client == nil {
		var err error
		if client, err = ddbclient.NewClient(ctx, cfg.Endpoint, cfg.Region); err != nil {
			return nil, nil, fmt.Errorf("DynamoDB client for the lease table: %w", err)
		}
	}
	if api == nil {
		o := client.Options()
		// GetRecords on the wire path (feed.WithWire): the client runs no
		// middleware but KeepConnections
		api = feed.WithWire(ctx, dynamodbstreams.New(dynamodbstreams.Options{Region: o.Region, Credentials: o.Credentials,
			BaseEndpoint: streamsEndpoint(o.BaseEndpoint), HTTPClient: o.HTTPClient,
			APIOptions: []func(*middleware.Stack) error{ddbclient.KeepConnectionsMiddleware}}))
	}
	return client, api, nil
}

// streamsEndpoint is the Streams endpoint for a DynamoDB endpoint: the same
// URL for a local server (ddblocal serves both), the AWS default otherwise.
func streamsEndpoint(ddb *string) *string {
	if ddb == nil || *ddb == "" {
		return nil
	}
	return aws.String(*ddb)
}

// WorkerID is the name this reader holds leases under.
func (r *Reader) WorkerID() string { return r.sc.WorkerID }

// Instance is this reader's instance token, written with the worker id
// into every lease it takes: its start time, host name, process id and
// random bits. Two processes with the same worker id have different
// instances, so they never both hold a lease.
func (r *Reader) Instance() string { return r.instance }

// Stats returns the running totals.
func (r *Reader) Stats() Stats {
	r.mu.Lock()
	st := Stats{Shards: len(r.held), StreamArn: r.arn}
	r.mu.Unlock()
	st.Records, st.Written, st.Failures, st.GivenUp = r.records.Load(), r.written.Load(), r.failures.Load(), r.givenUp.Load()
	now := time.Now()
	r.lags.Range(func(_, v any) bool {
		l := v.(readLag)
		if !l.oldest.IsZero() {
			st.Behind = max(st.Behind, now.Sub(l.oldest))
		}
		if l.held {
			st.HeldBack++
		}
		return true
	})
	return st
}

func (r *Reader) renewEvery() time.Duration { return time.Duration(r.sc.LeaseDuration) / 3 }

// Run reads until ctx ends, then stops gracefully: each shard's batch in
// flight is finished and checkpointed, and every lease is released so other
// workers take the shards at once. With ErrAbandoned as ctx's cause it
// stops at once instead (see ErrAbandoned). It returns nil after a
// graceful stop, or the error that stopped it (trimmed data under the
// "stop" policy, a lease table that does not exist).
func (r *Reader) Run(ctx context.Context) error {
	rd, err := openSource(ctx, r.cfg, r.api, r.kin, feed.Options{BatchSize: r.sc.BatchSize, PollInterval: time.Duration(r.sc.PollInterval)})
	if err != nil {
		return err
	}
	arn := rd.StreamArn()
	r.mu.Lock()
	r.arn = arn
	r.mu.Unlock()
	// proc is the context batches run under: it outlives ctx, so the batch
	// in flight finishes, unless the run is abandoned.
	proc, cancelProc := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelProc()
	stopWatch := context.AfterFunc(ctx, func() {
		if errors.Is(context.Cause(ctx), ErrAbandoned) {
			cancelProc()
		}
	})
	defer stopWatch()
	r.log.Info("change-feed reader started", "worker", r.sc.WorkerID, "instance", r.instance, "stream", arn, "leaseTable", r.sc.LeaseTable)
	if r.sc.Verify != nil {
		vctx, stopVerify := context.WithCancel(ctx)
		verified := make(chan struct{})
		go func() { defer close(verified); r.verifyLoop(vctx) }()
		defer func() { stopVerify(); <-verified }()
	}
	sctx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() { defer close(swept); r.sweepLoop(sctx) }()
	defer func() { stopSweep(); <-swept }()
	tr := &lease.Tracker{Duration: time.Duration(r.sc.LeaseDuration)}
	roundErr := r.watchOwnID(ctx, tr)
	if roundErr != nil && ctx.Err() != nil {
		return nil // stopped while watching: nothing held
	}
	if roundErr != nil {
		return roundErr
	}
	if r.afterCheck != nil {
		r.afterCheck()
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastFull time.Time
	var failures roundFailures
	full := true
	for roundErr == nil && r.fatalErr() == nil {
		if full {
			lastFull = time.Now()
		}
		roundErr = r.round(ctx, proc, rd, tr, full)
		failed := roundErr != nil && ctx.Err() == nil && !errors.Is(roundErr, lease.ErrNoTable)
		if failed {
			r.roundFailed(&failures, roundErr)
			roundErr, full = nil, true
		} else if roundErr == nil {
			r.roundOK(&failures)
		}
		if roundErr != nil || r.fatalErr() != nil {
			break
		}
		// the next round: a full one every third of the lease duration; a
		// quick one as soon as a shard finished (its children's leases are
		// created) or another worker's lease expires. After a failed round,
		// a whole round interval from now: the expiry the last good round
		// saw may be past already, and the table unreachable
		wait := time.Until(lastFull.Add(r.renewEvery()))
		r.mu.Lock()
		if next := r.nextExpiry; !failed && !next.IsZero() && time.Until(next) < wait {
			wait = time.Until(next) + time.Millisecond
		}
		r.mu.Unlock()
		if failed {
			wait = r.renewEvery()
		}
		timer.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			roundErr = ctx.Err()
		case <-timer.C:
			full = time.Since(lastFull) >= r.renewEvery()
		case <-r.kick:
			full = false
			timer.Stop()
		}
	}
	abandoned := errors.Is(context.Cause(ctx), ErrAbandoned)
	if abandoned {
		cancelProc() // before the workers look at it
	}
	r.stopAll()
	if err := r.fatalErr(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		if abandoned {
			return ErrAbandoned
		}
		r.log.Info("change-feed reader stopped; leases released", "worker", r.sc.WorkerID)
		return nil
	}
	return roundErr
}

func (r *Reader) fatalErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fatal
}

func (r *Reader) setFatal(err error) {
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
}

// stopAll stops every shard worker and waits for them: gracefully (finish,
// checkpoint, release) or, abandoned, at once.
func (r *Reader) stopAll() {
	r.mu.Lock()
	hs := make([]*held, 0, len(r.held))
	for _, h := range r.held {
		hs = append(hs, h)
	}
	r.mu.Unlock()
	for _, h := range hs {
		h.stop()
	}
	for _, h := range hs {
		<-h.done
	}
}
