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
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/streams"
	bolt "go.etcd.io/bbolt"
)

// Options configures a Server.
type Options struct {
	// Addr is the listen address; default "127.0.0.1:0" (a free port).
	Addr string
	// DataDir keeps tables, items, TTL settings and streams in a bbolt file
	// (DataDir/ddblocal.db) so they survive a restart; "" keeps everything
	// in memory.
	DataDir string
	// TTLInterval is the period of the background TTL sweeper. 0 means the
	// default (1s); a negative value turns the background sweeper off
	// (SweepTTL still works).
	TTLInterval time.Duration
	// Streams tunes the stream log (shards, retention, iterators).
	Streams StreamOptions
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
}

// StreamOptions tunes the stream log; zero fields take the streams
// package's defaults.
type StreamOptions struct {
	ShardMaxRecords int
	ShardMaxAge     time.Duration
	Retention       time.Duration
	IteratorTTL     time.Duration
}

// Server is a running ddblocal.
type Server struct {
	opts     Options
	log      *slog.Logger
	now      func() time.Time
	db       *bolt.DB
	dbPath   string
	failed   atomic.Pointer[error]
	streams  *streams.Registry
	ln       net.Listener
	http     *http.Server
	faults   *faultState
	stats    *stats
	idem     *idempotency
	catMu    sync.RWMutex
	tables   map[string]*table
	stopTTL  context.CancelFunc
	wg       sync.WaitGroup
	closeMu  sync.Mutex
	closed   bool
	serveErr chan error
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
		idem:     newIdempotency(),
		tables:   map[string]*table{},
		serveErr: make(chan error, 1),
	}
	if opts.DataDir != "" {
		if err := os.MkdirAll(opts.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("ddblocal: data dir: %w", err)
		}
		db, err := bolt.Open(filepath.Join(opts.DataDir, "ddblocal.db"), 0o600, &bolt.Options{Timeout: 5 * time.Second})
		if err != nil {
			return nil, fmt.Errorf("ddblocal: open store: %w", err)
		}
		s.db = db
	}
	reg, err := streams.NewRegistry(streams.Options{
		DB:              s.db,
		ShardMaxRecords: opts.Streams.ShardMaxRecords,
		ShardMaxAge:     opts.Streams.ShardMaxAge,
		Retention:       opts.Streams.Retention,
		IteratorTTL:     opts.Streams.IteratorTTL,
		Now:             opts.Now,
		Region:          opts.Region,
		AccountID:       opts.AccountID,
	})
	if err != nil {
		s.closeStores()
		return nil, fmt.Errorf("ddblocal: %w", err)
	}
	s.streams = reg
	if s.db != nil {
		if err := s.load(); err != nil {
			s.closeStores()
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		s.closeStores()
		return nil, fmt.Errorf("ddblocal: listen: %w", err)
	}
	s.ln = ln
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { s.serveErr <- s.http.Serve(ln) }()
	ttlCtx, cancel := context.WithCancel(context.Background())
	s.stopTTL = cancel
	if opts.TTLInterval > 0 {
		s.wg.Add(1)
		go s.ttlLoop(ttlCtx, opts.TTLInterval)
	}
	s.log.Debug("ddblocal started", "endpoint", s.Endpoint(), "data", opts.DataDir)
	return s, nil
}

// Serve runs a server until ctx is cancelled, then closes it.
func Serve(ctx context.Context, opts Options) error {
	s, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	s.log.Info("ddblocal listening", "endpoint", s.Endpoint(), "data", opts.DataDir)
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
	if s.db != nil {
		if cerr := s.db.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Stats returns the number of requests served per operation ("PutItem",
// "DynamoDBStreams.GetRecords", ...), faults included.
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
