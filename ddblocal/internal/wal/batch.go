// Package wal is ddblocal's write-ahead log: the changes of a store
// transaction are appended to a log file, in one write and one sync, and
// only later applied to the bbolt data file, many logged transactions in
// one bbolt transaction (a checkpoint).
//
// A change is one of three operations on a bucket named by its path from
// the root (every bucket on the path is created as needed): put a key,
// delete a key, delete a sub-bucket. A Batch records them for the log;
// Bolt applies them to a bbolt transaction at once. Both are Writers, so
// code that stores something writes it the same way into either.
package wal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/bbolt"
)

// Writer takes the changes of one store transaction.
type Writer interface {
	// Put sets key to value in the bucket at path, creating the buckets
	// of path that do not exist.
	Put(path [][]byte, key, value []byte) error
	// Delete deletes key from the bucket at path (nothing when absent).
	Delete(path [][]byte, key []byte) error
	// DeleteBucket deletes the sub-bucket name of the bucket at path
	// (nothing when absent).
	DeleteBucket(path [][]byte, name []byte) error
	// OnCommit runs fn once the changes are durable.
	OnCommit(fn func())
}

const (
	opPut          = 1
	opDelete       = 2
	opDeleteBucket = 3
)

// Batch records changes for the log. The zero Batch is empty.
type Batch struct {
	buf      []byte
	onCommit []func()
	scratch  []byte // PutAppend's values, reused
}

// Mark is a point of a Batch to roll back to.
type Mark struct{ buf, fns int }

// Mark returns the batch's current point.
func (b *Batch) Mark() Mark { return Mark{len(b.buf), len(b.onCommit)} }

// Rollback drops what was recorded after m.
func (b *Batch) Rollback(m Mark) {
	b.buf = b.buf[:m.buf]
	b.onCommit = b.onCommit[:m.fns]
}

// Len is the size of the recorded changes in bytes (0: none).
func (b *Batch) Len() int { return len(b.buf) }

func (b *Batch) op(op byte, path [][]byte, key []byte) {
	b.buf = append(b.buf, op)
	b.buf = binary.AppendUvarint(b.buf, uint64(len(path)))
	for _, p := range path {
		b.buf = appendBytes(b.buf, p)
	}
	b.buf = appendBytes(b.buf, key)
}

func appendBytes(buf, p []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(p)))
	return append(buf, p...)
}

// Put records a put.
func (b *Batch) Put(path [][]byte, key, value []byte) error {
	if len(path) == 0 || len(key) == 0 {
		return errors.New("wal: put needs a bucket and a key")
	}
	b.op(opPut, path, key)
	b.buf = appendBytes(b.buf, value)
	return nil
}

// PutAppend records a put of the value appendValue appends to the slice
// it is given (a scratch buffer the Batch reuses, so a value costs no
// allocation of its own); an error of appendValue is returned and nothing
// is recorded. The record is the one Put writes for the same value.
func (b *Batch) PutAppend(path [][]byte, key []byte, appendValue func([]byte) ([]byte, error)) error {
	if len(path) == 0 || len(key) == 0 {
		return errors.New("wal: put needs a bucket and a key")
	}
	v, err := appendValue(b.scratch[:0])
	if cap(v) <= maxScratch {
		b.scratch = v[:0]
	}
	if err != nil {
		return err
	}
	b.op(opPut, path, key)
	b.buf = appendBytes(b.buf, v)
	return nil
}

// maxScratch is the largest scratch buffer a Batch keeps for its next
// value (and the Store for its next batch): an item's usual size, not the
// 400 KB one seen once.
const maxScratch = 64 << 10

// Delete records a delete.
func (b *Batch) Delete(path [][]byte, key []byte) error {
	if len(path) == 0 || len(key) == 0 {
		return errors.New("wal: delete needs a bucket and a key")
	}
	b.op(opDelete, path, key)
	return nil
}

// DeleteBucket records the deletion of a bucket.
func (b *Batch) DeleteBucket(path [][]byte, name []byte) error {
	if len(name) == 0 {
		return errors.New("wal: delete bucket needs a name")
	}
	b.op(opDeleteBucket, path, name)
	return nil
}

// OnCommit runs fn once the batch is in the log (synced unless the log is
// not synced).
func (b *Batch) OnCommit(fn func()) { b.onCommit = append(b.onCommit, fn) }

// Bolt returns a Writer that applies changes to tx at once.
func Bolt(tx *bbolt.Tx) Writer { return &boltWriter{tx: tx} }

type boltWriter struct {
	tx *bbolt.Tx
	// the bucket of the last path walked, reused while the path is the
	// same and no bucket was deleted
	last   [][]byte
	lastB  *bbolt.Bucket
	create bool
}

func samePath(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			return false
		}
	}
	return true
}

// bucket walks path; create makes missing buckets, else nil is returned
// for a missing one.
func (w *boltWriter) bucket(path [][]byte, create bool) (*bbolt.Bucket, error) {
	if w.lastB != nil && (w.create || !create) && samePath(path, w.last) {
		return w.lastB, nil
	}
	var b *bbolt.Bucket
	for i, p := range path {
		var err error
		switch {
		case i == 0 && create:
			b, err = w.tx.CreateBucketIfNotExists(p)
		case i == 0:
			b = w.tx.Bucket(p)
		case create:
			b, err = b.CreateBucketIfNotExists(p)
		default:
			b = b.Bucket(p)
		}
		if err != nil {
			return nil, fmt.Errorf("bucket %q: %w", p, err)
		}
		if b == nil {
			return nil, nil
		}
	}
	if b != nil {
		w.last, w.lastB, w.create = append(w.last[:0], path...), b, create
	}
	return b, nil
}

func (w *boltWriter) Put(path [][]byte, key, value []byte) error {
	b, err := w.bucket(path, true)
	if err != nil {
		return err
	}
	return b.Put(key, value)
}

func (w *boltWriter) Delete(path [][]byte, key []byte) error {
	b, err := w.bucket(path, false)
	if err != nil || b == nil {
		return err
	}
	return b.Delete(key)
}

func (w *boltWriter) DeleteBucket(path [][]byte, name []byte) error {
	w.lastB, w.last = nil, w.last[:0]
	if len(path) == 0 {
		err := w.tx.DeleteBucket(name)
		if errors.Is(err, bbolt.ErrBucketNotFound) {
			return nil
		}
		return err
	}
	b, err := w.bucket(path, false)
	if err != nil || b == nil {
		return err
	}
	w.lastB, w.last = nil, w.last[:0]
	if err := b.DeleteBucket(name); err != nil && !errors.Is(err, bbolt.ErrBucketNotFound) {
		return err
	}
	return nil
}

func (w *boltWriter) OnCommit(fn func()) { w.tx.OnCommit(fn) }

// Apply applies the changes a Batch recorded (payload: its bytes) to tx.
// Applying the same payload again gives the same store.
func Apply(tx *bbolt.Tx, payload []byte) error { return apply(&boltWriter{tx: tx}, payload) }

func apply(w *boltWriter, p []byte) error {
	var path [][]byte
	for len(p) > 0 {
		op := p[0]
		p = p[1:]
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)) {
			return errBadPayload
		}
		p = p[k:]
		path = path[:0]
		for range n {
			var seg []byte
			if seg, p = readBytes(p); seg == nil {
				return errBadPayload
			}
			path = append(path, seg)
		}
		var key []byte
		if key, p = readBytes(p); key == nil {
			return errBadPayload
		}
		var err error
		switch op {
		case opPut:
			var v []byte
			if v, p = readBytes(p); v == nil {
				return errBadPayload
			}
			err = w.Put(path, key, v)
		case opDelete:
			err = w.Delete(path, key)
		case opDeleteBucket:
			err = w.DeleteBucket(path, key)
		default:
			return errBadPayload
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var errBadPayload = errors.New("wal: a logged record does not decode")

// readBytes reads a length-prefixed byte string; nil when p is too short
// (an empty string is returned as a non-nil empty slice).
func readBytes(p []byte) ([]byte, []byte) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return nil, p
	}
	return p[k : k+int(n) : k+int(n)], p[k+int(n):]
}
