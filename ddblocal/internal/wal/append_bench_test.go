//go:build linux

package wal

import (
	"bytes"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkLogAppend appends a 1 KiB record per op, synced, to a log that
// is preallocated (written in place) or not (every append grows the
// file), reporting the process's system CPU per append (sys-µs/op, from
// getrusage, which counts every thread of the process).
func BenchmarkLogAppend(b *testing.B) {
	for _, mode := range []string{"grow", "prealloc"} {
		b.Run(mode, func(b *testing.B) {
			noPrealloc = mode == "grow"
			defer func() { noPrealloc = false }()
			dir := b.TempDir()
			db := openDB(b, dir)
			defer db.Close()
			// no checkpoint during the run: the file grows throughout
			st, err := Open(db, filepath.Join(dir, "d.log"), Options{CheckpointRecords: 1 << 30, CheckpointBytes: 1 << 40})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			v := bytes.Repeat([]byte("v"), 1000)
			path, key := [][]byte{[]byte("a")}, []byte("k")
			var ru0, ru1 syscall.Rusage
			b.ResetTimer()
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for range b.N {
				if err := st.Commit(func(bt *Batch) error { return bt.Put(path, key, v) }); err != nil {
					b.Fatal(err)
				}
			}
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			b.StopTimer()
			sys := time.Duration(syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
			b.ReportMetric(float64(sys)/float64(time.Microsecond)/float64(b.N), "sys-µs/op")
		})
	}
}
