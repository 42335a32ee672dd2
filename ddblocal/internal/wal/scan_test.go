package wal

import (
	"errors"
	"slices"
	"testing"
)

func logOf(recs ...record) []byte {
	data := []byte(logMagic)
	for _, r := range recs {
		data = frame(data, r.lsn, r.payload)
	}
	return data
}

func lsns(recs []record) []uint64 {
	var out []uint64
	for _, r := range recs {
		out = append(out, r.lsn)
	}
	return out
}

// TestY8_ScanReadsTheCurrentRunOnly: the records past what the data file
// holds are read, in order, up to the end of the current run: zeros, a torn
// record, or a record of an earlier run end it.
func TestY8_ScanReadsTheCurrentRunOnly(t *testing.T) {
	p := []byte("payload")
	cur := logOf(record{7, p}, record{8, p}, record{9, p})
	torn := frame(nil, 10, []byte("a longer payload"))
	earlier := frame(nil, 3, p) // a stale record of an earlier run
	for _, tc := range []struct {
		name    string
		data    []byte
		applied uint64
		want    []uint64
	}{
		{"all", cur, 6, []uint64{7, 8, 9}},
		{"past applied", cur, 7, []uint64{8, 9}},
		{"all applied", cur, 9, nil},
		{"zeros after", append(append([]byte{}, cur...), make([]byte, 100)...), 6, []uint64{7, 8, 9}},
		{"torn last", append(append([]byte{}, cur...), torn[:len(torn)-4]...), 6, []uint64{7, 8, 9}},
		{"earlier run after", append(append([]byte{}, cur...), earlier...), 6, []uint64{7, 8, 9}},
		{"an earlier run alone, applied", logOf(record{2, p}, record{3, p}), 9, nil},
		{"empty", []byte(logMagic), 0, nil},
	} {
		got, err := scan(tc.data, tc.applied)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(lsns(got), tc.want) {
			t.Errorf("%s: records %v, want %v", tc.name, lsns(got), tc.want)
		}
	}
}

// TestY8_ScanRefusesADamagedMiddleRecord: a record that does not read
// while the next record of the run follows it is damage.
func TestY8_ScanRefusesADamagedMiddleRecord(t *testing.T) {
	p := []byte("payload")
	data := logOf(record{7, p}, record{8, p}, record{9, p})
	data[headerSize+frameSize+len(p)+frameSize+1] ^= 1 // record 8's payload
	if _, err := scan(data, 6); !errors.Is(err, ErrDamaged) {
		t.Errorf("scan: %v, want ErrDamaged", err)
	}
	first := logOf(record{7, p}, record{8, p})
	first[headerSize+frameSize] ^= 1 // record 7's payload, the first
	if _, err := scan(first, 6); !errors.Is(err, ErrDamaged) {
		t.Errorf("scan of a damaged first record: %v, want ErrDamaged", err)
	}
	length := logOf(record{7, p}, record{8, p}, record{9, p})
	length[headerSize+frameSize+len(p)+1] ^= 0x10 // record 8's length
	if _, err := scan(length, 6); !errors.Is(err, ErrDamaged) {
		t.Errorf("scan of a damaged length: %v, want ErrDamaged", err)
	}
	if _, err := scan([]byte("not a log at all"), 0); !errors.Is(err, ErrDamaged) {
		t.Errorf("scan of a file with another header: %v, want ErrDamaged", err)
	}
}
