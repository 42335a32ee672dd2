package wal

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

func openDB(t testing.TB, dir string) *bbolt.DB {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, "d.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// dump returns every key of every bucket of db, nested paths included.
func dump(t *testing.T, db *bbolt.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(prefix string, b *bbolt.Bucket)
	walk = func(prefix string, b *bbolt.Bucket) {
		_ = b.ForEach(func(k, v []byte) error {
			if v == nil {
				walk(prefix+"/"+string(k), b.Bucket(k))
			} else {
				out[prefix+"/"+string(k)] = string(v)
			}
			return nil
		})
	}
	_ = db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			if string(name) != string(metaBucket) {
				walk(string(name), b)
			}
			return nil
		})
	})
	return out
}

func ops(w Writer, i int) error {
	a, ab := []byte("a"), [][]byte{[]byte("a"), []byte("b")}
	if err := w.Put([][]byte{a}, []byte(fmt.Sprint("k", i%5)), []byte(fmt.Sprint("v", i))); err != nil {
		return err
	}
	if err := w.Put(ab, []byte(fmt.Sprint("n", i)), nil); err != nil {
		return err
	}
	if i%4 == 3 {
		if err := w.Delete([][]byte{a}, []byte(fmt.Sprint("k", (i+1)%5))); err != nil {
			return err
		}
	}
	if i%7 == 6 {
		return w.DeleteBucket([][]byte{a}, []byte("b"))
	}
	return nil
}

// TestY8_LoggedChangesGiveTheStoreDirectChangesGive: changes committed
// through the log, checkpointed, replayed after a crash (the log left as
// it is) and replayed again, give the data file the same buckets and keys
// as the same changes written to bbolt directly.
func TestY8_LoggedChangesGiveTheStoreDirectChangesGive(t *testing.T) {
	direct := openDB(t, t.TempDir())
	defer direct.Close()
	for i := range 40 {
		if err := direct.Update(func(tx *bbolt.Tx) error { return ops(Bolt(tx), i) }); err != nil {
			t.Fatal(err)
		}
	}
	want := dump(t, direct)

	dir := t.TempDir()
	db := openDB(t, dir)
	st, err := Open(db, filepath.Join(dir, "d.log"), Options{CheckpointRecords: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if i == 25 {
			if err := st.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Commit(func(b *Batch) error { return ops(b, i) }); err != nil {
			t.Fatal(err)
		}
	}
	if st.Pending() != 15 {
		t.Errorf("%d batches pending, want 15", st.Pending())
	}
	// A crash: the log is left as it is; the data file has the first 25.
	close(st.done)
	<-st.stopped
	_ = st.f.Close()
	for round := range 2 {
		st, err = Open(db, filepath.Join(dir, "d.log"), Options{})
		if err != nil {
			t.Fatalf("reopening (%d): %v", round, err)
		}
		if got := dump(t, db); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("reopened (%d): the data file holds\n%v\nwant\n%v", round, got, want)
		}
		if round == 0 { // a crash again, right after the replay
			close(st.done)
			<-st.stopped
			_ = st.f.Close()
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
}

// TestY8_LogIsRefusedAfterAForeignChange: a log left by a crash is not
// replayed over a data file something else changed since (an earlier
// ddblocal, which ignores the log): ErrDamaged.
func TestY8_LogIsRefusedAfterAForeignChange(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	defer db.Close()
	st, err := Open(db, filepath.Join(dir, "d.log"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(func(b *Batch) error { return ops(b, 1) }); err != nil {
		t.Fatal(err)
	}
	close(st.done) // a crash
	<-st.stopped
	_ = st.f.Close()
	if err := db.Update(func(tx *bbolt.Tx) error { return ops(Bolt(tx), 2) }); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(db, filepath.Join(dir, "d.log"), Options{}); !errors.Is(err, ErrDamaged) {
		t.Errorf("Open after a foreign change: %v, want ErrDamaged", err)
	}
}
