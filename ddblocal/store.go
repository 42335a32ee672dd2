package ddblocal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
)

// dataFileName is the bbolt file ddblocal keeps in Options.DataDir.
const dataFileName = "ddblocal.db"

// storeLockTimeout is how long Start waits for the data file's lock before
// deciding another process holds it.
const storeLockTimeout = time.Second

// ErrDataFileLocked is returned (wrapped) by Start when another process,
// usually another ddblocal, holds the data file.
var ErrDataFileLocked = errors.New("the data file is held by another process")

// ErrDataFileDamaged is returned (wrapped) by Start when the data file is
// truncated, corrupted or not a ddblocal data file.
var ErrDataFileDamaged = errors.New("the data file is damaged")

// openStore opens the data file at path, creating it when it does not
// exist, and refuses one that is not intact: empty, shorter than its last
// transaction needs, making bbolt panic, or failing its consistency check. A new file is created under a temporary name and renamed into
// place, so an existing empty or short file is never one ddblocal left
// half-made.
func openStore(path string) (db *bolt.DB, err error) {
	damaged := func(format string, a ...any) error {
		return fmt.Errorf("ddblocal: %w: %s %s; restore it from a backup, or move it away to start with an empty store",
			ErrDataFileDamaged, path, fmt.Sprintf(format, a...))
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := createStore(path); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("ddblocal: data file %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("ddblocal: data file %s is not a regular file; point --data at a directory ddblocal owns", path)
	case fi.Size() == 0:
		return nil, damaged("is empty (0 bytes)")
	}
	if err := checkStoreFile(path); err != nil {
		return nil, damaged("%v", err)
	}
	locked := func(err error) error {
		return fmt.Errorf("ddblocal: %w: %s is locked by another process (another ddblocal on the same data dir?): still locked after %v (%w); stop it or use another data directory",
			ErrDataFileLocked, path, storeLockTimeout, err)
	}
	// Read every page, read-only, before the file is opened for writing:
	// opening it for writing rebuilds its freelist (when it is not stored,
	// storeOptions) from every page its buckets reach, in a goroutine of
	// bbolt's own, where a damaged page could not be recovered.
	if err := walkStore(path); errors.Is(err, bolt.ErrTimeout) {
		return nil, locked(err)
	} else if err != nil {
		return nil, damaged("%v", err)
	}
	defer func() {
		if p := recover(); p != nil {
			if db != nil {
				_ = db.Close()
			}
			db, err = nil, damaged("made the store panic (%v)", p)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, err = bolt.Open(path, 0o600, storeOptions())
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, locked(err)
	}
	if err != nil {
		return nil, damaged("cannot be opened (%v)", err)
	}
	if err := checkStore(db, path); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// storeOptions are the bbolt options of the data file. The freelist (the
// file's free pages) is not written with each commit but rebuilt when the
// file is opened, from the pages its buckets reach (openStore reads them
// all anyway): a commit writes and syncs one page fewer. bbolt opens a file
// either way: one written with a stored freelist opens with these options
// (its freelist page is freed by the first commit), and one written with
// these opens with the defaults (bbolt rebuilds the freelist and stores it
// at once), so data directories move between ddblocal versions freely.
func storeOptions() *bolt.Options {
	if storeFreelistSync {
		return &bolt.Options{Timeout: storeLockTimeout}
	}
	return &bolt.Options{Timeout: storeLockTimeout, NoFreelistSync: true, FreelistType: bolt.FreelistMapType}
}

// storeFreelistSync selects the options of earlier ddblocal versions (the
// freelist stored with every commit); set by tests only, which open data
// directories written one way with the other.
var storeFreelistSync = false

// walkStore opens the data file at path read-only and reads every page its
// buckets reach: a damaged page panics (or faults) here, where it is
// recovered and returned as an error.
func walkStore(path string) (err error) {
	var db *bolt.DB
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("made the store panic (%v)", p)
		}
		if db != nil {
			_ = db.Close()
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: storeLockTimeout, ReadOnly: true})
	if errors.Is(err, bolt.ErrTimeout) {
		return err
	}
	if err != nil {
		return fmt.Errorf("cannot be opened (%v)", err)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walkBucket(b) })
	}); err != nil {
		return fmt.Errorf("cannot be read (%v)", err)
	}
	return nil
}

// walkBucket visits every key and value of a bucket and its sub-buckets.
func walkBucket(b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			if sub := b.Bucket(k); sub != nil {
				return walkBucket(sub)
			}
		}
		return nil
	})
}

// checkStore runs bbolt's consistency check (freelist, page reachability)
// on an open store. openStore runs it after reading every page under
// SetPanicOnFault, as bbolt checks in a goroutine of its own where a fault
// on a wildly damaged page could not be recovered.
func checkStore(db *bolt.DB, path string) error {
	var problems []error
	_ = db.View(func(tx *bolt.Tx) error {
		for e := range tx.Check() {
			if len(problems) < 3 {
				problems = append(problems, e)
			}
		}
		return nil
	})
	if len(problems) > 0 {
		return fmt.Errorf("ddblocal: %w: %s fails bbolt's consistency check: %w; restore it from a backup, or move it away to start with an empty store",
			ErrDataFileDamaged, path, errors.Join(problems...))
	}
	return nil
}

// createStore makes a new empty bbolt file at path: under a temporary name,
// synced, then renamed into place.
func createStore(path string) error {
	tmp := path + ".new"
	_ = os.Remove(tmp) // a leftover of a start that died creating it
	db, err := bolt.Open(tmp, 0o600, storeOptions())
	if err != nil {
		return fmt.Errorf("ddblocal: creating data file %s: %w", tmp, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("ddblocal: creating data file %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("ddblocal: creating data file %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// bbolt's meta page: a 16-byte page header, then magic, version, page size,
// flags, root bucket (root page, sequence), freelist page, high water mark
// (pgid), txid and the FNV-64a checksum of what precedes it.
const (
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	boltPageHeader  = 16
	boltMetaSize    = 64
	boltMetaSummed  = 56
	boltMinPageSize = 512
)

type boltMeta struct {
	pageSize uint32
	pgid     uint64
	txid     uint64
}

// checkStoreFile validates the bbolt meta pages of path and that the file
// holds every page its newest valid meta page counts: a truncated file
// would otherwise fault (SIGBUS) when bbolt reads past its end.
func checkStoreFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot be read (%v)", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("cannot be read (%v)", err)
	}
	size := fi.Size()
	head := make([]byte, boltPageHeader+boltMetaSize)
	if _, err := io.ReadFull(f, head); err != nil {
		return fmt.Errorf("is %d bytes, too short for a bbolt file (truncated?)", size)
	}
	var metas []boltMeta
	m0, ok0 := parseBoltMeta(head[boltPageHeader:])
	pageSizes := []int64{int64(os.Getpagesize())}
	if ok0 {
		metas = append(metas, m0)
		pageSizes = []int64{int64(m0.pageSize)}
	}
	for _, ps := range pageSizes {
		if _, err := f.ReadAt(head, ps); err != nil {
			continue
		}
		if m1, ok := parseBoltMeta(head[boltPageHeader:]); ok {
			metas = append(metas, m1)
		}
	}
	if len(metas) == 0 {
		return fmt.Errorf("has no valid bbolt meta page (not a ddblocal data file, or its first pages are corrupted)")
	}
	best := metas[0]
	for _, m := range metas[1:] {
		if m.txid > best.txid {
			best = m
		}
	}
	if need := int64(best.pgid) * int64(best.pageSize); size < need {
		return fmt.Errorf("is truncated: %d bytes, but its last transaction (%d) needs %d", size, best.txid, need)
	}
	return nil
}

func parseBoltMeta(b []byte) (boltMeta, bool) {
	le := binary.LittleEndian
	if le.Uint32(b[0:]) != boltMagic || le.Uint32(b[4:]) != boltVersion {
		return boltMeta{}, false
	}
	h := fnv.New64a()
	_, _ = h.Write(b[:boltMetaSummed])
	if h.Sum64() != le.Uint64(b[boltMetaSummed:]) {
		return boltMeta{}, false
	}
	m := boltMeta{pageSize: le.Uint32(b[8:]), pgid: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}
	if m.pageSize < boltMinPageSize || m.pageSize&(m.pageSize-1) != 0 || m.pgid < 2 {
		return boltMeta{}, false
	}
	return m, true
}
