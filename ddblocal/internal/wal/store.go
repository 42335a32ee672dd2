package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"go.etcd.io/bbolt"
)

// DB is what the stream registries need of the store: transactions that
// see, and come after, every change committed before them.
type DB interface {
	Update(fn func(tx *bbolt.Tx) error) error
	View(fn func(tx *bbolt.Tx) error) error
}

// metaBucket holds, in the data file, the number of the last log record
// applied to it (appliedKey, 8 bytes big endian) and the bbolt transaction
// that wrote it (txKey): every transaction of a Store writes both, so a
// data file changed since by something else (an earlier ddblocal, which
// does not know the log) shows.
var (
	metaBucket = []byte("ddblocal.log")
	appliedKey = []byte("applied")
	txKey      = []byte("tx")
)

// Default checkpoint thresholds.
const (
	DefaultCheckpointBytes   = 4 << 20
	DefaultCheckpointRecords = 2048
)

// Options configure a Store.
type Options struct {
	// NoSync appends without syncing the log: an appended record
	// survives the process being killed, not the machine crashing.
	NoSync bool
	// CheckpointBytes and CheckpointRecords start a checkpoint in the
	// background once the log holds that many payload bytes or records
	// (0: the defaults).
	CheckpointBytes, CheckpointRecords int
	// Log reports a failed background checkpoint (nil: slog's default).
	Log *slog.Logger
	// OnCheckpoint, when set, runs in the bbolt transaction of every
	// checkpoint that applies logged records, after them.
	OnCheckpoint func(tx *bbolt.Tx) error
}

// Store is a bbolt data file with a log ahead of it. Commit appends a
// batch of changes to the log; a checkpoint applies every logged batch to
// the data file in one bbolt transaction, then starts the log over.
// Update and View drain the log into the data file first, so they see,
// and come after, every committed batch.
type Store struct {
	db   *bbolt.DB
	f    *os.File
	path string
	opts Options

	mu      sync.Mutex // appends, checkpoints and updates, one at a time
	off     int64      // where the next record goes
	size    int64      // the log file's size (preallocated, see grow)
	lsn     uint64     // the last record's number (appended or applied)
	applied uint64     // the last record's number in the data file
	pending [][]byte   // payloads of records lsn-len(pending)+1 .. lsn
	pbytes  int
	buf     []byte
	// the last batch's size (its successor's first capacity) and the
	// batch Commit stages into (not kept past a Commit)
	lastBatch int
	batch     Batch
	closing   bool // Close has begun
	closed    bool

	kick    chan struct{}
	done    chan struct{}
	stopped chan struct{}

	// Appends and Checkpoints count log appends and checkpoints.
	Appends, Checkpoints atomic.Int64
}

// Open opens the log at path in front of db, replays into db every
// complete record the log holds past what db has (in one transaction,
// synced), and starts the background checkpoints. A log torn by a crash
// mid-append loses its torn record (never acknowledged); a damaged record
// that complete records follow is ErrDamaged.
func Open(db *bbolt.DB, path string, opts Options) (*Store, error) {
	if opts.CheckpointBytes <= 0 {
		opts.CheckpointBytes = DefaultCheckpointBytes
	}
	if opts.CheckpointRecords <= 0 {
		opts.CheckpointRecords = DefaultCheckpointRecords
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	var applied uint64
	foreign := false // the data file changed since a Store last wrote it
	marked := false  // a Store wrote it
	if err := db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(metaBucket); b != nil {
			marked = true
			if v := b.Get(appliedKey); len(v) == 8 {
				applied = binary.BigEndian.Uint64(v)
			}
			if v := b.Get(txKey); len(v) == 8 {
				foreign = binary.BigEndian.Uint64(v) != uint64(tx.ID())
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	f, data, err := openLog(path)
	if err != nil {
		return nil, fmt.Errorf("log %s: %w", path, err)
	}
	recs, err := scan(data, applied)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("log %s: %w", path, err)
	}
	if len(recs) > 0 && (foreign || !marked) {
		_ = f.Close()
		return nil, fmt.Errorf("log %s: %w: it holds %d writes the data file lacks, but the data file was changed since without them (by an earlier ddblocal?)", path, ErrDamaged, len(recs))
	}
	if len(recs) > 0 || !marked {
		last := applied
		if len(recs) > 0 {
			last = recs[len(recs)-1].lsn
		}
		err := db.Update(func(tx *bbolt.Tx) error {
			w := &boltWriter{tx: tx}
			for _, r := range recs {
				if err := apply(w, r.payload); err != nil {
					return fmt.Errorf("%w: record %d: %w", ErrDamaged, r.lsn, err)
				}
			}
			return putApplied(tx, last)
		})
		if err == nil && db.NoSync {
			err = db.Sync()
		}
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("log %s: replaying %d records: %w", path, len(recs), err)
		}
		applied = last
	}
	s := &Store{db: db, f: f, path: path, opts: opts, off: int64(headerSize), size: int64(len(data)), lsn: applied, applied: applied,
		kick: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	if err := s.grow(int64(headerSize) + 1); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("log %s: preallocating: %w", path, err)
	}
	go s.loop()
	return s, nil
}

// putApplied stores, in tx, lsn as the last record applied, and tx as the
// Store's last transaction.
func putApplied(tx *bbolt.Tx, lsn uint64) error {
	b, err := tx.CreateBucketIfNotExists(metaBucket)
	if err != nil {
		return err
	}
	if err := b.Put(appliedKey, binary.BigEndian.AppendUint64(nil, lsn)); err != nil {
		return err
	}
	return b.Put(txKey, binary.BigEndian.AppendUint64(nil, uint64(tx.ID())))
}

// ErrClosed is returned once the Store is closed.
var ErrClosed = errors.New("wal: store closed")

// Commit runs stage, which records changes in a batch, and appends the
// batch to the log as one record, in one write, synced unless NoSync; then
// it runs the batch's OnCommit functions. stage runs under the Store's
// lock: batches are logged, and applied, in the order they were staged,
// and after every Update that returned before. An error of stage is
// returned and nothing is logged. An empty batch logs nothing.
func (s *Store) Commit(stage func(b *Batch) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	// the Store's one Batch, under s.mu: a new buffer sized as the last
	// one (the log keeps it until a checkpoint, so it is not reused),
	// the values' scratch and the OnCommit list reused
	b := &s.batch
	clear(b.onCommit)
	*b = Batch{buf: make([]byte, 0, s.lastBatch), onCommit: b.onCommit[:0], scratch: b.scratch}
	if err := stage(b); err != nil {
		return err
	}
	if b.Len() == 0 {
		for _, fn := range b.onCommit {
			fn()
		}
		return nil
	}
	s.lastBatch = min(len(b.buf), maxScratch)
	s.buf = frame(s.buf[:0], s.lsn+1, b.buf)
	if err := s.grow(s.off + int64(len(s.buf))); err != nil {
		return fmt.Errorf("preallocating %s: %w", s.path, err)
	}
	if _, err := s.f.WriteAt(s.buf, s.off); err != nil {
		return fmt.Errorf("appending to %s: %w", s.path, err)
	}
	if !s.opts.NoSync {
		if err := fdatasync(s.f); err != nil {
			return fmt.Errorf("syncing %s: %w", s.path, err)
		}
	}
	s.off += int64(len(s.buf))
	s.lsn++
	s.pending = append(s.pending, b.buf)
	s.pbytes += len(b.buf)
	s.Appends.Add(1)
	for _, fn := range b.onCommit {
		fn()
	}
	if s.pbytes >= s.opts.CheckpointBytes || len(s.pending) >= s.opts.CheckpointRecords {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// Update drains the log into the data file and runs fn, in one bbolt
// transaction: fn's changes come after every committed batch.
func (s *Store) Update(fn func(tx *bbolt.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.updateLocked(fn)
}

func (s *Store) updateLocked(fn func(tx *bbolt.Tx) error) error {
	n := len(s.pending)
	err := s.db.Update(func(tx *bbolt.Tx) error {
		w := &boltWriter{tx: tx}
		for i, p := range s.pending {
			if err := apply(w, p); err != nil {
				return fmt.Errorf("applying logged record %d: %w", s.lsn-uint64(n)+uint64(i)+1, err)
			}
		}
		if err := putApplied(tx, s.lsn); err != nil {
			return err
		}
		if n > 0 && s.opts.OnCheckpoint != nil {
			if err := s.opts.OnCheckpoint(tx); err != nil {
				return err
			}
		}
		if fn != nil {
			return fn(tx)
		}
		return nil
	})
	if err != nil || n == 0 {
		return err
	}
	// Every record is in the data file: the log starts over.
	s.applied = s.lsn
	s.pending, s.pbytes, s.off = nil, 0, int64(headerSize)
	s.Checkpoints.Add(1)
	return nil
}

// View drains the log into the data file when it holds anything, then
// runs fn in a read-only transaction.
func (s *Store) View(fn func(tx *bbolt.Tx) error) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	var err error
	if len(s.pending) > 0 {
		err = s.updateLocked(nil)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.db.View(fn)
}

// Checkpoint applies every logged batch to the data file now.
func (s *Store) Checkpoint() error { return s.Update(nil) }

// Pending returns the number of logged batches not yet in the data file.
func (s *Store) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

func (s *Store) loop() {
	defer close(s.stopped)
	for {
		select {
		case <-s.done:
			return
		case <-s.kick:
		}
		if err := s.Checkpoint(); err != nil && !errors.Is(err, ErrClosed) {
			s.opts.Log.Error("ddblocal: checkpointing the log into the data file; the log keeps every write", "log", s.path, "err", err)
		}
	}
}

// Close stops the background checkpoints, applies the log to the data
// file and closes the log file, left at its preallocated size: every
// record it holds is then in the data file, and the next Open writes over
// them from the start. It does not close the bbolt database.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed || s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	s.mu.Unlock()
	close(s.done)
	<-s.stopped
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	err := s.updateLocked(nil)
	if err == nil && s.db.NoSync {
		err = s.db.Sync()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// growStep is the step the log file is preallocated in when appends are
// synced. An append that changes the file's size makes every fdatasync
// commit the inode's new size through the file system's journal as well;
// one that writes over bytes already written (not fallocate's unwritten
// extents, whose first write is a journal commit too) flushes its data
// blocks alone. So the file is grown ahead of the appends, zeros written
// and synced once per step, and the log written in place over them: after
// a checkpoint (and at Open) from its start again, over records already in
// the data file, never shrunk.
const growStep = 1 << 20

// zeroChunk is the size of each write of zeros: a page. One large write
// puts the file's pages in large page-cache folios, and an append into one
// of those then writes back (and walks) the whole folio at its sync, which
// costs more than the journal commit saved.
const zeroChunk = 4096

var zeros = make([]byte, zeroChunk)

// noPrealloc turns preallocation off (BenchmarkLogAppend compares).
var noPrealloc bool

// grow makes the log file at least need bytes long, in whole growSteps of
// zeros, synced (size included); nothing with NoSync, whose appends are
// not synced and grow the file themselves.
func (s *Store) grow(need int64) error {
	if s.opts.NoSync || noPrealloc || need <= s.size {
		return nil
	}
	target := (need + growStep - 1) / growStep * growStep
	for off := s.size; off < target; {
		n := min(int64(zeroChunk)-off%zeroChunk, target-off)
		if _, err := s.f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	if err := s.f.Sync(); err != nil {
		return err
	}
	s.size = target
	return nil
}

// syncDir syncs the directory of path, so a file created in it stays.
func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
