package ddblocal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/wal"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
	"github.com/dynafold/dynafold/internal/ddbjson"
	bolt "go.etcd.io/bbolt"
)

// Store layout: bucket "ddblocal.tables" maps a table name to its JSON
// tableMeta; bucket "ddblocal.items.<name>" maps an encoded primary key to
// the item in DynamoDB JSON.
var catalogBucket = []byte("ddblocal.tables")

func itemsBucket(name string) []byte { return []byte("ddblocal.items." + name) }

func storeErr(err error) error {
	return &apierr.Error{Code: "InternalServerError", Status: 500, Message: fmt.Sprintf("Internal server error (store: %v)", err)}
}

// encodeKey encodes a primary key's values in schema order.
func encodeKey(t *table, key abi.Item) []byte {
	var b []byte
	for _, n := range t.key.names() {
		v := key[n]
		b = append(b, byte(v.Kind))
		raw := []byte(v.Str)
		if v.Kind == abi.KindB {
			raw = v.Bytes
		}
		b = binary.AppendUvarint(b, uint64(len(raw)))
		b = append(b, raw...)
	}
	return b
}

// saveMeta persists a table's metadata (no-op in memory).
func (s *Server) saveMeta(t *table) error {
	if s.db == nil {
		return nil
	}
	// A stream enabled or disabled with this change is stored first, so a
	// stored table never names a stream the store lacks.
	if err := s.streams.Flush(); err != nil {
		return storeErr(err)
	}
	b, err := json.Marshal(t.meta)
	if err != nil {
		return storeErr(err)
	}
	err = s.wal.Update(func(tx *bolt.Tx) error {
		c, err := tx.CreateBucketIfNotExists(catalogBucket)
		if err != nil {
			return err
		}
		if _, err := tx.CreateBucketIfNotExists(itemsBucket(t.name)); err != nil {
			return err
		}
		return c.Put([]byte(t.name), b)
	})
	if err != nil {
		return storeErr(err)
	}
	return nil
}

// dropTable removes a table and its items from the store.
func (s *Server) dropTable(name string) error {
	if s.db == nil {
		return nil
	}
	err := s.wal.Update(func(tx *bolt.Tx) error {
		if c := tx.Bucket(catalogBucket); c != nil {
			if err := c.Delete([]byte(name)); err != nil {
				return err
			}
		}
		if tx.Bucket(itemsBucket(name)) != nil {
			return tx.DeleteBucket(itemsBucket(name))
		}
		return nil
	})
	if err != nil {
		return storeErr(err)
	}
	return nil
}

// stageTx writes a commit's changes, their stream records and their
// Kinesis streaming destination records to w (a batch of the log). It sets
// *staged once it hands a registry a record: if w's changes then are not
// stored, the registry and the store disagree, and the server refuses
// every later write (see failStore) until it is restarted on the data dir.
func (s *Server) stageTx(w *wal.Batch, p *pendingCommit, staged *bool) error {
	for _, c := range p.eff {
		path := [][]byte{itemsBucket(c.t.name)}
		k := encodeKey(c.t, c.key)
		if c.new == nil {
			if err := w.Delete(path, k); err != nil {
				return err
			}
			continue
		}
		// json.Marshal(wire.Item(c.new)), byte for byte, in one pass
		// straight into the batch
		if err := w.PutAppend(path, k, func(b []byte) ([]byte, error) { return ddbjson.AppendItemBytes(b, c.new) }); err != nil {
			return err
		}
	}
	if p.tok != nil {
		if err := w.Put([][]byte{tokensBucket}, tokenKey(p.tok), binary.BigEndian.AppendUint64(nil, p.tok.digest)); err != nil {
			return err
		}
	}
	for _, r := range p.recs {
		*staged = true
		if err := s.streams.RecordTo(w, r.arn, r.ch); err != nil {
			return err
		}
	}
	for _, r := range p.krecs {
		*staged = true
		if err := s.kin.RecordTo(w, r.stream, r.pk, r.data); err != nil {
			return err
		}
	}
	return nil
}

// failStore puts the server in a failed state: a store transaction failed
// after stream records were taken in memory. Every later write is refused;
// the data file holds every acknowledged write and its stream records.
func (s *Server) failStore(err error) {
	s.log.Error("ddblocal: store transaction failed; refusing writes until restarted", "data", s.dbPath, "err", err)
	s.failed.CompareAndSwap(nil, &err)
	s.kin.Fail() // its records of the failed transaction are in memory only, too
}

func (s *Server) storeFailed() error {
	if p := s.failed.Load(); p != nil {
		return fmt.Errorf("an earlier store transaction failed (%w); restart ddblocal on %s to resume writes", *p, s.dbPath)
	}
	return nil
}

// loadSafely is load, with a panic of bbolt on a damaged page (or a fault
// reading it) returned as an error.
func (s *Server) loadSafely() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reading the store panicked: %v", p)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if err := s.load(); err != nil {
		return err
	}
	return s.loadTokens()
}

// load reads every table and item from the store.
func (s *Server) load() error {
	return s.wal.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(catalogBucket)
		if c == nil {
			return nil
		}
		return c.ForEach(func(k, v []byte) error {
			var m tableMeta
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("ddblocal: load table %s: %w", k, err)
			}
			t := newTable(m)
			if b := tx.Bucket(itemsBucket(m.TableName)); b != nil {
				err := b.ForEach(func(_, iv []byte) error {
					var it wire.Item
					if err := json.Unmarshal(iv, &it); err != nil {
						return fmt.Errorf("ddblocal: load item of %s: %w", m.TableName, err)
					}
					t.put(abi.Item(it))
					return nil
				})
				if err != nil {
					return err
				}
			}
			s.tables[m.TableName] = t
			return nil
		})
	})
}

// loadTokens remembers the ClientRequestTokens of the store whose window
// has not ended (those in the bucket are in the order stored).
func (s *Server) loadTokens() error {
	now := s.now()
	return s.wal.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(tokensBucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			at, token, ok := parseTokenKey(k)
			if !ok || len(v) != 8 {
				return fmt.Errorf("ddblocal: a stored ClientRequestToken %q does not read", k)
			}
			if now.Sub(at) < idemWindow {
				s.idem.store(token, binary.BigEndian.Uint64(v), at)
			}
			return nil
		})
	})
}

// tokensBucket holds, with a data dir, the ClientRequestTokens of the
// transactions of the last 10 minutes: the key is the time stored (Unix
// nanoseconds, 8 bytes big endian) then the token, so the bucket is in the
// order stored and the tokens whose window ended are its first keys; the
// value is the request's digest (8 bytes big endian).
var tokensBucket = []byte("ddblocal.tokens")

func tokenKey(k *txToken) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(k.token)), uint64(k.at.UnixNano()))
	return append(b, k.token...)
}

func parseTokenKey(k []byte) (time.Time, string, bool) {
	if len(k) <= 8 {
		return time.Time{}, "", false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(k))), string(k[8:]), true
}

// dropExpiredTokens deletes from tx the stored tokens whose window has
// ended (run by every checkpoint).
func (s *Server) dropExpiredTokens(tx *bolt.Tx) error {
	b := tx.Bucket(tokensBucket)
	if b == nil {
		return nil
	}
	cut := binary.BigEndian.AppendUint64(nil, uint64(s.now().Add(-idemWindow).UnixNano()))
	var old [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k[:min(len(k), 8)], cut) < 0; k, _ = c.Next() {
		old = append(old, k)
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// logFileName is the log ddblocal keeps ahead of the data file in
// Options.DataDir: every item write (with its stream and Kinesis records)
// is appended and synced there before it is answered, and applied to the
// data file later, many at a time (see doc.go).
const logFileName = "ddblocal.log"

// openLog opens the log at path ahead of db and replays into db what a
// crash left in it; a damaged log is ErrDataFileDamaged.
func openLog(db *bolt.DB, path string, noSync bool, lg *slog.Logger, onCheckpoint func(*bolt.Tx) error) (*wal.Store, error) {
	st, err := wal.Open(db, path, wal.Options{NoSync: noSync, Log: lg, OnCheckpoint: onCheckpoint,
		CheckpointBytes: logCheckpointBytes, CheckpointRecords: logCheckpointRecords})
	if errors.Is(err, wal.ErrDamaged) {
		return nil, fmt.Errorf("ddblocal: %w: %w; restore the data directory from a backup, or move %s away to start from the data file alone (losing the writes the log holds)",
			ErrDataFileDamaged, err, path)
	}
	if err != nil {
		return nil, fmt.Errorf("ddblocal: opening the log %s: %w", path, err)
	}
	return st, nil
}

// Checkpoint thresholds of the log (0: the defaults of package wal); set
// by tests.
var logCheckpointBytes, logCheckpointRecords int

// storeDB is the store the stream registries write to: the log ahead of
// the data file, or nil in memory.
func (s *Server) storeDB() wal.DB {
	if s.wal == nil {
		return nil
	}
	return s.wal
}
