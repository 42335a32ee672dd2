package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/kinesis"
	"github.com/dynafold/dynafold/ddblocal/internal/streams"
	"github.com/dynafold/dynafold/ddblocal/internal/wal"
	bolt "go.etcd.io/bbolt"
)

// Options configures a Server.
type Options struct {
	// Addr is the listen address; default "127.0.0.1:0" (a free port). It
	// must be a loopback address unless AllowNonLoopback is set.
	Addr string
	// AllowNonLoopback lets Addr be a non-loopback address (such as
	// "0.0.0.0:8000" or ":8000"). ddblocal checks no credentials: anyone
	// who reaches the port can read and change every table, so Start logs
	// a warning when it listens on one.
	AllowNonLoopback bool
	// AllowUnsigned serves requests that carry no AWS Signature Version 4
	// Authorization header. By default they are refused as DynamoDB
	// refuses them (MissingAuthenticationTokenException); the AWS SDKs and
	// CLI always sign (any credentials do), so set it only for a client
	// that cannot.
	AllowUnsigned bool
	// ReadHeaderTimeout bounds the time to read a request's headers
	// (default 5s); ReadTimeout the time to read a whole request, body
	// included (default 30s), so a client that stops sending mid-body is
	// disconnected; IdleTimeout how long an idle keep-alive connection
	// stays open (default 120s). A negative value means no limit.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	// DataDir keeps tables, items, TTL settings and streams in a bbolt file
	// (DataDir/ddblocal.db), the latest writes in a log ahead of it
	// (DataDir/ddblocal.log), so they survive a restart; "" keeps
	// everything in memory.
	DataDir string
	// NoSync skips the file sync after each append to DataDir's log (and
	// each checkpoint of the log into the data file). An
	// acknowledged write still survives the death of the ddblocal process
	// (even kill -9): it is in the operating system's cache, which writes
	// it out. It does not survive the machine's: a power loss or a kernel
	// crash can lose the last writes or damage the file. Writes cost about
	// a fifth less CPU and wait for no disk flush: for tests and
	// development on one machine (dynalite's store does not sync its
	// writes either). A clean Close syncs the file once.
	NoSync bool
	// TTLInterval is the period of the background TTL sweeper. 0 means the
	// default (1s); a negative value turns the background sweeper off
	// (SweepTTL still works).
	TTLInterval time.Duration
	// Streams tunes the stream log (shards, retention, iterators).
	Streams StreamOptions
	// Kinesis tunes the Kinesis Data Streams API (shards, iterators, the
	// read limit, the streaming destination's faults).
	Kinesis KinesisOptions
	// Now is the clock (TTL, stream record times, idempotency windows);
	// default time.Now.
	Now func() time.Time
	// Logger receives the server's logs; default slog.Default().
	Logger *slog.Logger
	// Faults injects errors and latency; off when zero.
	Faults FaultConfig
	// Region and AccountID appear in ARNs; defaults "us-east-1" and
	// "000000000000".
	Region    string
	AccountID string

	// RequestMemory bounds the memory of the requests being read, decoded
	// and served at once: each is charged, before its body is read, the
	// most decoding a body of its length can take (24 times its length,
	// at most seven eighths of the limit), until its response is written.
	// A request that does not fit waits; small ones (charges up to an
	// eighth of the limit) pass while large ones wait. Default 512 MiB; a
	// negative value means no limit.
	RequestMemory int64
	// TableDelay is how long a table stays CREATING after CreateTable,
	// UPDATING after UpdateTable and DELETING after DeleteTable (and a new
	// global secondary index CREATING), as DynamoDB's tables take a while
	// (typically seconds; dynalite's default is 500ms). Default 0: the
	// operation answers CREATING, UPDATING or DELETING, and the table is
	// ACTIVE, or gone, at once, which keeps tests fast.
	TableDelay time.Duration

	// RequestMemoryWait is how long a request waits for RequestMemory
	// before it is refused with a ThrottlingException (which the AWS SDKs
	// retry); default 10s, a negative value refuses at once.
	RequestMemoryWait time.Duration

	// netHTTPOnly serves every connection with net/http's server, without
	// ddblocal's own front (front.go); tests compare the two.
	netHTTPOnly bool
}

// StreamOptions tunes the stream log; zero fields take the streams
// package's defaults.
type StreamOptions struct {
	// ShardMaxRecords closes a shard and opens its child after this many
	// records (default 10000).
	ShardMaxRecords int
	// ShardMaxAge closes a shard and opens its child at this age (default 4h).
	ShardMaxAge time.Duration
	// Retention trims records older than this (default 24h).
	Retention time.Duration
	// IteratorTTL expires shard iterators after this (default 15m).
	IteratorTTL time.Duration

	// Shards is how many open shards a new stream has (default 4), each
	// taking the records of one range of partition-key hashes, so an
	// item's records stay in one shard, in order.
	Shards int
	// SplitAfterRecords, when positive, splits a shard that has taken this
	// many records into two children, each taking half of its keys, as
	// DynamoDB splits a growing partition (default 0: only SplitShard
	// splits).
	SplitAfterRecords int
	// MaxShards stops automatic splits while a stream has this many open
	// shards (default 64).
	MaxShards int
}

// Server is a running ddblocal.
type Server struct {
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	db       *bolt.DB
	wal      *wal.Store // the log ahead of db (persist.go); nil in memory
	dbPath   string
	failed   atomic.Pointer[error]
	streams  *streams.Registry
	kin      *kinesis.Registry // the Kinesis Data Streams API (kinesis.go)
	ln       net.Listener
	http     *http.Server
	fast     *fastFront // ddblocal's own front (front.go); nil when net/http serves every connection
	faults   *faultState
	stats    *stats
	idem     *idempotency
	keys     *keyLocks   // item locks of writes to the store (keylock.go)
	gc       groupCommit // the store's shared commits (groupcommit.go)
	catMu    sync.RWMutex
	tables   map[string]*table
	ghosts   map[string]ghost // deleted tables while DELETING (lifecycle.go)
	stopTTL  context.CancelFunc
	wg       sync.WaitGroup
	closeMu  sync.Mutex
	closed   bool
	serveErr chan error
	fresh    freshConns // connections that have not sent a byte (conns.go)

	mem     *memBudget    // Options.RequestMemory
	memWait time.Duration // Options.RequestMemoryWait
	// testHook, when set (by tests), runs at each stage of a request:
	// "admitted" once it holds its request memory (before its body is
	// read), "read" once its body is read (before it is dispatched).
	testHook atomic.Pointer[func(stage string, r *http.Request)]
	// uncheckedReads, set by tests before the first request, serves every
	// request by the checking path (no checked read, checked.go).
	uncheckedReads bool
}

// Start starts a server listening on opts.Addr and returns once it accepts
// requests.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.AccountID == "" {
		opts.AccountID = "000000000000"
	}
	if opts.TTLInterval == 0 {
		opts.TTLInterval = time.Second
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		now:      opts.Now,
		faults:   newFaultState(opts.Faults),
		stats:    newStats(),
		keys:     newKeyLocks(),
		idem:     newIdempotency(),
		tables:   map[string]*table{},
		serveErr: make(chan error, 1),
	}
	s.mem, s.memWait = newMemBudget(requestMemory(opts.RequestMemory)), timeoutOr(opts.RequestMemoryWait, defaultRequestMemoryWait)
	if opts.DataDir != "" {
		if err := os.MkdirAll(opts.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("ddblocal: data dir: %w", err)
		}
		s.dbPath = filepath.Join(opts.DataDir, dataFileName)
		db, err := openStore(s.dbPath)
		if err != nil {
			return nil, err
		}
		db.NoSync = opts.NoSync
		lg, err := openLog(db, filepath.Join(opts.DataDir, logFileName), opts.NoSync, s.log, s.dropExpiredTokens)
		if err != nil {
			_ = db.Close()
			return nil, err
		}
		s.db, s.wal = db, lg
	}
	reg, err := newRegistry(streams.Options{
		DB:              s.storeDB(),
		ShardMaxRecords: opts.Streams.ShardMaxRecords,
		ShardMaxAge:     opts.Streams.ShardMaxAge,
		Retention:       opts.Streams.Retention,
		IteratorTTL:     opts.Streams.IteratorTTL,

		Shards:            opts.Streams.Shards,
		SplitAfterRecords: opts.Streams.SplitAfterRecords,
		MaxShards:         opts.Streams.MaxShards,
		Now:               opts.Now,
		Region:            opts.Region,
		AccountID:         opts.AccountID,
		// The registry keeps the items it is handed, not copies: a stream
		// record's images are the items a write stored (and its key,
		// keyCopy'd), and no stored item is changed once stored — a write
		// stores a new item (PutItem the request's own; UpdateItem a
		// deep copy, expr's apply), reads and answers only encode them,
		// and the registry only encodes its records.
		// TestY8_StreamImagesAreTheItemsAtEachWrite checks every record's
		// images against the items read at its write.
		NoCopy: true,
	})
	if err != nil {
		s.closeStores()
		if s.db != nil {
			return nil, fmt.Errorf("ddblocal: %w: %s: %w; restore it from a backup, or move it away to start with an empty store", ErrDataFileDamaged, s.dbPath, err)
		}
		return nil, fmt.Errorf("ddblocal: %w", err)
	}
	s.streams = reg
	if s.kin, err = newKinesis(opts, s.storeDB()); err != nil {
		s.closeStores()
		if s.db != nil {
			return nil, fmt.Errorf("ddblocal: %w: %s: %w; restore it from a backup, or move it away to start with an empty store", ErrDataFileDamaged, s.dbPath, err)
		}
		return nil, fmt.Errorf("ddblocal: %w", err)
	}
	if s.db != nil {
		if err := s.loadSafely(); err != nil {
			s.closeStores()
			return nil, fmt.Errorf("ddblocal: %w: %s: %w; restore it from a backup, or move it away to start with an empty store", ErrDataFileDamaged, s.dbPath, err)
		}
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		s.closeStores()
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("ddblocal: listen: %w: another process listens on %s (another ddblocal?); stop it, or give this one another address (--addr 127.0.0.1:8001, Options.Addr)", err, opts.Addr)
		}
		return nil, fmt.Errorf("ddblocal: listen: %w", err)
	}
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		if !opts.AllowNonLoopback {
			_ = ln.Close()
			s.closeStores()
			return nil, fmt.Errorf("ddblocal: %w: %q listens on %s; ddblocal has no authentication, so listen on 127.0.0.1 or [::1], or allow it explicitly (Options.AllowNonLoopback, --allow-non-loopback)",
				ErrNonLoopback, opts.Addr, ln.Addr())
		}
		s.log.Warn("ddblocal: listening on a non-loopback address; anyone who can reach it can read and change every table (no authentication)", "addr", ln.Addr().String())
	}
	s.ln = ln
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: timeoutOr(opts.ReadHeaderTimeout, 5*time.Second),
		ReadTimeout:       timeoutOr(opts.ReadTimeout, 30*time.Second),
		IdleTimeout:       timeoutOr(opts.IdleTimeout, 120*time.Second),
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		ConnState:         s.fresh.track,
	}
	s.http.RegisterOnShutdown(s.fresh.closeAll)
	if frontSupported && !opts.netHTTPOnly {
		s.fast = newFastFront(s, ln, s.http)
		go func() { s.served(s.fast.serve()) }()
		go func() { s.served(s.http.Serve(s.fast.handoff)) }()
	} else {
		go func() { s.served(s.http.Serve(ln)) }()
	}
	ttlCtx, cancel := context.WithCancel(context.Background())
	s.stopTTL = cancel
	if opts.TTLInterval > 0 {
		s.wg.Add(1)
		go s.ttlLoop(ttlCtx, opts.TTLInterval)
	}
	s.log.Debug("ddblocal started", "endpoint", s.Endpoint(), "data", opts.DataDir)
	return s, nil
}

// served passes on the end of a front's serving (the first one, to Serve).
func (s *Server) served(err error) {
	select {
	case s.serveErr <- err:
	default:
	}
}

// ErrNonLoopback is returned (wrapped) by Start when Options.Addr is not a
// loopback address and Options.AllowNonLoopback is not set.
var ErrNonLoopback = errors.New("refusing a non-loopback listen address")

// timeoutOr returns d, def when d is 0, and 0 (no limit) when d < 0.
func timeoutOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Serve runs a server until ctx is cancelled, then closes it.
func Serve(ctx context.Context, opts Options) error {
	s, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	s.log.Info("ddblocal listening", "endpoint", s.Endpoint(), "data", opts.DataDir)
	return s.ServeUntil(ctx)
}

// ServeUntil waits until ctx ends, then closes the server, or until serving
// fails (the error, the server closed): what Serve does after Start, for a
// caller that keeps the Server to change it meanwhile (SetFaults).
func (s *Server) ServeUntil(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case err := <-s.serveErr:
		_ = s.Close()
		return fmt.Errorf("ddblocal: serve: %w", err)
	}
	return s.Close()
}

// Endpoint returns the server's base URL, http://127.0.0.1:PORT.
func (s *Server) Endpoint() string { return "http://" + s.ln.Addr().String() }

// Close stops the server, waits for requests in flight and closes the store.
func (s *Server) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopTTL()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.fast != nil {
		// first: what it hands over meanwhile goes to net/http's server
		s.fast.shutdown(ctx.Done())
	}
	err := s.http.Shutdown(ctx)
	s.wg.Wait()
	if cerr := s.closeStores(); err == nil {
		err = cerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (s *Server) closeStores() error {
	var err error
	if s.streams != nil {
		err = s.streams.Close()
	}
	if s.wal != nil {
		if cerr := s.wal.Close(); err == nil { // the log applied to the data file, and emptied
			err = cerr
		}
	}
	if s.db != nil {
		if s.opts.NoSync { // a clean stop leaves everything on disk
			if serr := s.db.Sync(); err == nil {
				err = serr
			}
		}
		if cerr := s.db.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Stats returns the number of requests served per operation ("PutItem",
// "DynamoDBStreams.GetRecords", "Kinesis.GetRecords", ...), faults included.
func (s *Server) Stats() map[string]int64 { return s.stats.snapshot() }

type stats struct {
	mu sync.Mutex
	n  map[string]int64
}

func newStats() *stats { return &stats{n: map[string]int64{}} }

func (st *stats) add(op string) {
	st.mu.Lock()
	st.n[op]++
	st.mu.Unlock()
}

func (st *stats) snapshot() map[string]int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make(map[string]int64, len(st.n))
	for k, v := range st.n {
		out[k] = v
	}
	return out
}

// newRegistry is streams.NewRegistry, with a panic of bbolt reading a
// damaged page returned as an error.
func newRegistry(o streams.Options) (r *streams.Registry, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("reading the streams panicked: %v", p)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return streams.NewRegistry(o)
}
