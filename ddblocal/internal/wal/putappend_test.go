package wal

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// PutAppend records what Put records for the same value, from a scratch
// buffer it reuses; an error records nothing.
func TestY8_PutAppendRecordsWhatPutRecords(t *testing.T) {
	path := [][]byte{[]byte("a"), []byte("bucket")}
	for _, v := range []string{"", "x", strings.Repeat("v", 200), strings.Repeat("w", 70000)} {
		var put, app Batch
		if err := put.Put(path, []byte("k1"), []byte(v)); err != nil {
			t.Fatal(err)
		}
		if err := put.Put(path, []byte("k2"), []byte(v+"!")); err != nil {
			t.Fatal(err)
		}
		if err := app.PutAppend(path, []byte("k1"), func(b []byte) ([]byte, error) { return append(b, v...), nil }); err != nil {
			t.Fatal(err)
		}
		if err := app.PutAppend(path, []byte("k2"), func(b []byte) ([]byte, error) {
			if len(b) != 0 {
				t.Errorf("scratch handed over with %d bytes in it", len(b))
			}
			return append(append(b, v...), '!'), nil
		}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(put.buf, app.buf) {
			t.Fatalf("value of %d bytes: PutAppend recorded %q, Put %q", len(v), app.buf, put.buf)
		}
		if len(v) > maxScratch && cap(app.scratch) > maxScratch {
			t.Errorf("a %d-byte scratch kept", cap(app.scratch))
		}
	}
	var b Batch
	boom := errors.New("boom")
	if err := b.PutAppend(path, []byte("k"), func(b []byte) ([]byte, error) { return append(b, "part"...), boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if b.Len() != 0 {
		t.Fatalf("a failed PutAppend recorded %d bytes", b.Len())
	}
	if err := b.PutAppend(nil, []byte("k"), func(b []byte) ([]byte, error) { return b, nil }); err == nil {
		t.Fatal("a put without a bucket was recorded")
	}
}
