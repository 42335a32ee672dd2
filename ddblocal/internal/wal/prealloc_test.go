package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// TestY8_LogIsPreallocatedAndWrittenInPlace: a synced log is grown in
// whole steps of zeros ahead of its appends, written over from its start
// after a checkpoint (its size unchanged), kept at its size by Close, and
// reopened with nothing to replay; OnCheckpoint runs in each checkpoint
// that applies records. A log not synced is not preallocated.
func TestY8_LogIsPreallocatedAndWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	defer db.Close()
	path := filepath.Join(dir, "d.log")
	hooks := 0
	opts := Options{CheckpointRecords: 1 << 20, CheckpointBytes: 1 << 30, OnCheckpoint: func(*bbolt.Tx) error { hooks++; return nil }}
	st, err := Open(db, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if got := size(); got != growStep {
		t.Fatalf("a new log is %d bytes, want %d (one step of zeros)", got, growStep)
	}
	big := bytes.Repeat([]byte("v"), 64<<10)
	put := func(i int) {
		t.Helper()
		if err := st.Commit(func(b *Batch) error {
			return b.Put([][]byte{[]byte("a")}, []byte{byte(i)}, big)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 { // 1.25 MiB of records
		put(i)
	}
	if got := size(); got != 2*growStep {
		t.Errorf("after 1.25 MiB of records the log is %d bytes, want %d", got, 2*growStep)
	}
	if err := st.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		put(100 + i)
	}
	if got := size(); got != 2*growStep {
		t.Errorf("after a checkpoint and more appends the log is %d bytes, want %d (written in place)", got, 2*growStep)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if hooks != 2 {
		t.Errorf("OnCheckpoint ran %d times, want 2 (the checkpoint and Close's)", hooks)
	}
	if got := size(); got != 2*growStep {
		t.Errorf("after Close the log is %d bytes, want %d", got, 2*growStep)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := scan(data, 25); err != nil || len(recs) != 0 {
		t.Errorf("the closed log scans as %d records to replay (%v), want none", len(recs), err)
	}
	st, err = Open(db, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	nosync := filepath.Join(dir, "n.log")
	st, err = Open(db, nosync, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	put(1)
	if fi, err := os.Stat(nosync); err != nil || fi.Size() >= growStep {
		t.Errorf("a log not synced: %v (%v); want no preallocation, under %d bytes", fi, err, growStep)
	}
	_ = st.Close()
}
