package ddblocal

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	bolt "go.etcd.io/bbolt"
)

// BenchmarkTableGet looks up items of a range-key table in memory: 8
// partitions of 2500 items with numeric range keys, the shape
// BenchmarkServerCPU's PutItem leaves behind. Every GetItem and every
// write (its condition's read, then its apply) runs this search.
//
//	go test ./ddblocal -run '^$' -bench TableGet -benchmem
func BenchmarkTableGet(b *testing.B) {
	t := newTable(tableMeta{TableName: "t",
		KeySchema:            []keyElem{{"pk", "HASH"}, {"sk", "RANGE"}},
		AttributeDefinitions: []attrDef{{"pk", "S"}, {"sk", "N"}}})
	const parts, rows = 8, 2500
	for p := range parts {
		for i := range rows {
			t.put(abi.Item{"pk": abi.Value{Kind: abi.KindS, Str: "w" + strconv.Itoa(p)},
				"sk": abi.Value{Kind: abi.KindN, Str: strconv.Itoa(i)}, "name": abi.Value{Kind: abi.KindS, Str: "item-name"}})
		}
	}
	keys := make([]abi.Item, 1024)
	for i := range keys {
		keys[i] = abi.Item{"pk": abi.Value{Kind: abi.KindS, Str: "w" + strconv.Itoa(i%parts)},
			"sk": abi.Value{Kind: abi.KindN, Str: strconv.Itoa(i * 7919 % rows)}}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if t.get(keys[i%len(keys)]) == nil {
			b.Fatal("item not found")
		}
	}
}

// bigDataFile writes a data file of 200,000 items (about 94 MiB) with
// about 8,700 free pages (deleted items) under the current freelist setting
// and returns its path.
func bigDataFile(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), dataFileName)
	db, err := openStore(path)
	if err != nil {
		b.Fatal(err)
	}
	val := []byte(strings.Repeat("v", 200))
	const items, perTx = 200_000, 10_000
	for i := 0; i < items; i += perTx {
		err := db.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists(itemsBucket("big"))
			if err != nil {
				return err
			}
			for j := i; j < i+perTx; j++ {
				if err := bk.Put([]byte(fmt.Sprintf("key-%09d", j*7919%items)), val); err != nil {
					return err
				}
				if j%5 == 0 && j > 0 { // free some pages
					if err := bk.Delete([]byte(fmt.Sprintf("key-%09d", (j-1)*7919%items))); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

var freelistCases = []struct {
	name   string
	stored bool
}{{"freelist-stored", true}, {"freelist-rebuilt", false}}

// BenchmarkOpenStore opens (openStore: every page read, bbolt's consistency
// check) bigDataFile written with the freelist stored with each commit (the
// earlier setting) and written without (the current: bbolt rebuilds the
// freelist from the pages the buckets reach).
//
//	go test ./ddblocal -run '^$' -bench OpenStore -benchtime 10x
func BenchmarkOpenStore(b *testing.B) {
	defer func(v bool) { storeFreelistSync = v }(storeFreelistSync)
	for _, fc := range freelistCases {
		b.Run(fc.name, func(b *testing.B) {
			storeFreelistSync = fc.stored
			path := bigDataFile(b)
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			var free int
			b.ResetTimer()
			for range b.N {
				db, err := openStore(path)
				if err != nil {
					b.Fatal(err)
				}
				free = db.Stats().FreePageN
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
			b.ReportMetric(float64(free), "free-pages")
		})
	}
}

// BenchmarkStoreCommitBigFile commits one item (a 250-byte put, fsynced)
// per transaction to bigDataFile, under each freelist setting: with the
// freelist stored, every commit also writes its ~70 KB.
//
//	go test ./ddblocal -run '^$' -bench StoreCommitBigFile -benchtime 300x
func BenchmarkStoreCommitBigFile(b *testing.B) {
	defer func(v bool) { storeFreelistSync = v }(storeFreelistSync)
	for _, fc := range freelistCases {
		b.Run(fc.name, func(b *testing.B) {
			storeFreelistSync = fc.stored
			db, err := openStore(bigDataFile(b))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			val := []byte(strings.Repeat("w", 250))
			st0 := db.Stats().TxStats
			cpu0 := processCPU(b)
			b.ResetTimer()
			for i := range b.N {
				err := db.Update(func(tx *bolt.Tx) error {
					return tx.Bucket(itemsBucket("big")).Put([]byte(fmt.Sprintf("key-%09d", i*104729%200_000)), val)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			st := db.Stats().TxStats
			b.ReportMetric(float64(st.GetWrite()-st0.GetWrite())/float64(b.N), "page-writes/op")
			b.ReportMetric(float64(st.GetPageAlloc()-st0.GetPageAlloc())/float64(b.N), "bytes-allocated/op")
		})
	}
}

// processCPU is this process's user and system CPU so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skipf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStoreCommitBatch commits 1, 4 or 8 puts (250-byte items on 8
// distinct leaf pages, as 8 concurrent writers of their own keys do) per
// store transaction and reports the process's CPU per put: a commit's fixed
// cost (two fdatasyncs, the meta page, the pages above the leaves) shared
// by its puts, and each put's own (its leaf page written and synced).
//
//	go test ./ddblocal -run '^$' -bench StoreCommitBatch -benchtime 2000x
func BenchmarkStoreCommitBatch(b *testing.B) {
	for _, per := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("puts=%d", per), func(b *testing.B) {
			db, err := openStore(filepath.Join(b.TempDir(), dataFileName))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			val := []byte(strings.Repeat("w", 230))
			err = db.Update(func(tx *bolt.Tx) error {
				bk, err := tx.CreateBucketIfNotExists(itemsBucket("x"))
				for w := range 8 {
					for i := 0; err == nil && i < 500; i++ {
						err = bk.Put([]byte(fmt.Sprintf("w%d-%06d", w, i)), val)
					}
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			cpu0 := processCPU(b)
			b.ResetTimer()
			for i := 0; i < b.N; i += per {
				err := db.Update(func(tx *bolt.Tx) error {
					bk := tx.Bucket(itemsBucket("x"))
					for j := i; j < i+per; j++ {
						if err := bk.Put([]byte(fmt.Sprintf("w%d-%06d", j%8, 1000+j)), val); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/put")
		})
	}
}
