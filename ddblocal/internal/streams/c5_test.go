package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"go.etcd.io/bbolt"
)

// describe lists the stream's shards as "id[parent]:open|closed".
func describe(t *testing.T, c *dynamodbstreams.Client, arn string) []string {
	t.Helper()
	var out []string
	for _, sh := range shards(t, c, arn) {
		state := "open"
		if sh.SequenceNumberRange.EndingSequenceNumber != nil {
			state = "closed"
		}
		out = append(out, fmt.Sprintf("%s[%s]:%s", *sh.ShardId, aws.ToString(sh.ParentShardId), state))
	}
	return out
}

// A rollover caused by a record written in a transaction shows only once
// the transaction commits: until then readers see the parent open, read its
// committed records and get a NextShardIterator, and see no child; so a
// reader never finishes a shard whose closing a crash could undo.
func TestC5_ARolloverShowsOnlyOnceItsTransactionCommits(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "ddb.bolt"))
	r := newRegistry(t, Options{DB: db, Shards: 1, ShardMaxRecords: 1})
	c := serve(t, r)
	arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	record := func(v int) *bboltTx {
		tx, err := db.Begin(true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback() }) // before the registry's Close, which waits for the writer
		if err := r.RecordTx(tx, arn, modify("a", v-1, v)); err != nil {
			t.Fatal(err)
		}
		return &bboltTx{t, tx}
	}
	record(1).commit()
	before := describe(t, c, arn)
	if len(before) != 1 {
		t.Fatalf("shards %v, want one", before)
	}
	pending := record(2) // rolls the shard over: the record goes to a child
	if got := describe(t, c, arn); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("before the commit, readers see %v; want %v (the parent open, no child)", got, before)
	}
	recs, next := readShard(t, c, arn, *shards(t, c, arn)[0].ShardId, types.ShardIteratorTypeTrimHorizon)
	if len(recs) != 1 || next == nil {
		t.Fatalf("before the commit the parent gives %d records and next %v; want its 1 record and an iterator", len(recs), next)
	}
	pending.commit()
	parent := *shards(t, c, arn)[0].ShardId
	after := shards(t, c, arn)
	if len(after) != 2 || *after[0].ShardId != parent || after[0].SequenceNumberRange.EndingSequenceNumber == nil ||
		aws.ToString(after[1].ParentShardId) != parent || after[1].SequenceNumberRange.EndingSequenceNumber != nil {
		t.Fatalf("after the commit, readers see %v; want the parent closed and its open child", describe(t, c, arn))
	}
	_, next = drain(t, c, next)
	if next != nil {
		t.Fatal("the parent's iterator did not end once its closing committed")
	}
	if got := readAll(t, c, arn); len(got) != 2 {
		t.Fatalf("%d records across the lineage, want 2", len(got))
	}
}

type bboltTx struct {
	t  *testing.T
	tx interface{ Commit() error }
}

func (b *bboltTx) commit() {
	if err := b.tx.Commit(); err != nil {
		b.t.Fatal(err)
	}
}

// A rollover by age that a reader brings about, and a split, are stored at
// once: a registry reopened on the database without any flush (a crash)
// has them, so no reader saw a shard closed that the crash reopens.
func TestC5_RolloverByAgeAndSplitAreStoredAtOnce(t *testing.T) {
	clk := newClock()
	db := openDB(t, filepath.Join(t.TempDir(), "ddb.bolt"))
	r := newRegistry(t, Options{DB: db, Now: clk.Now, ShardMaxAge: time.Hour, FlushDelay: time.Hour})
	c := serve(t, r)
	arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
	if err := r.Flush(); err != nil { // as ddblocal stores a stream it enables
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	rolled := describe(t, c, arn)
	infos, err := r.Shards(arn)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := r.Split(arn, infos[len(infos)-1].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := describe(t, c, arn)
	if len(rolled) != 8 || len(want) != 10 || len(kids) != 2 {
		t.Fatalf("after an hour %d shards, after a split %d (children %v); want 8 and 10", len(rolled), len(want), kids)
	}

	reopened := newRegistry(t, Options{DB: db, Now: clk.Now, ShardMaxAge: time.Hour})
	if got := describe(t, serve(t, reopened), arn); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reopened without a flush:\n%v\nwant\n%v", got, want)
	}
}

// A data file written before streams had several shards (shards without a
// hash range) still loads: its shards take every key, and records keep
// going to its open shard.
func TestC5_ADataFileOfOneShardStreamsStillLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ddb.bolt")
	db := openDB(t, path)
	r, err := NewRegistry(Options{DB: db, Shards: 1, ShardMaxRecords: 2})
	if err != nil {
		t.Fatal(err)
	}
	arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
	for v := 1; v <= 3; v++ {
		r.Record(arn, modify("a", v-1, v))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// as the previous version stored shards: no "Hash"
	if err := db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(rootBucket).Bucket(streamsBucket).Bucket([]byte(arn)).Bucket(shardsBucket)
		var ks, vs [][]byte
		if err := b.ForEach(func(k, v []byte) error {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			if _, ok := m["Hash"]; !ok {
				return fmt.Errorf("shard %s stored without its hash range", k)
			}
			delete(m, "Hash")
			nv, _ := json.Marshal(m)
			ks, vs = append(ks, append([]byte(nil), k...)), append(vs, nv)
			return nil
		}); err != nil {
			return err
		}
		for i := range ks {
			if err := b.Put(ks[i], vs[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	r2 := newRegistry(t, Options{DB: db, ShardMaxRecords: 2})
	c := serve(t, r2)
	r2.Record(arn, modify("b", 0, 1))
	all := shards(t, c, arn)
	if len(all) != 2 || all[1].SequenceNumberRange.EndingSequenceNumber != nil {
		t.Fatalf("shards %v; want the old two, the second open", describe(t, c, arn))
	}
	infos, _ := r2.Shards(arn)
	if infos[1].HashStart != 0 || infos[1].HashEnd != math.MaxUint64 || infos[1].Records != 2 {
		t.Fatalf("the old open shard %+v: want every hash, and the new record", infos[1])
	}
	if got := readAll(t, c, arn); len(got) != 4 {
		t.Fatalf("%d records, want 4", len(got))
	}
}

// Writers, splits on demand and lineage readers race on one stream, in
// memory and with a database: afterwards every item's records are there
// once, in write order, read parents first.
func TestC5_RecordSplitAndReadConcurrently(t *testing.T) {
	for _, persist := range []bool{false, true} {
		t.Run(fmt.Sprintf("persist=%v", persist), func(t *testing.T) {
			opts := Options{Shards: 2, SplitAfterRecords: 40, MaxShards: 16}
			var db *bbolt.DB
			if persist {
				db = openDB(t, filepath.Join(t.TempDir(), "ddb.bolt"))
				db.NoSync = true // about concurrency, not durability
				opts.DB = db
			}
			r := newRegistry(t, opts)
			c := serve(t, r)
			arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			const writers, items, versions = 4, 6, 40
			record := func(ch Change) error {
				if db == nil {
					r.Record(arn, ch)
					return nil
				}
				return db.Update(func(tx *bbolt.Tx) error { return r.RecordTx(tx, arn, ch) })
			}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			errs := make(chan error, writers+2)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for v := 1; v <= versions; v++ {
						for i := range items {
							if err := record(modify(fmt.Sprintf("w%d-%d", w, i), v-1, v)); err != nil {
								errs <- err
								return
							}
						}
					}
				}()
			}
			var bg sync.WaitGroup
			bg.Add(2)
			go func() { // splits on demand
				defer bg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					infos, err := r.Shards(arn)
					if err != nil {
						errs <- err
						return
					}
					open := infos[:0]
					for _, in := range infos {
						if in.Open() {
							open = append(open, in)
						}
					}
					if len(open) < 24 {
						if _, err := r.Split(arn, open[n%len(open)].ID); err != nil && !errors.Is(err, ErrShardClosed) {
							errs <- err
							return
						}
					}
					time.Sleep(time.Millisecond)
				}
			}()
			go func() { // a reader following the lineage while it grows
				defer bg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					_ = readAllQuiet(c, arn)
				}
			}()
			wg.Wait()
			close(stop)
			bg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			last := map[string]int{}
			for _, rec := range readAll(t, c, arn) {
				id := rec.Dynamodb.Keys["pk"].(*types.AttributeValueMemberS).Value
				var v int
				fmt.Sscan(rec.Dynamodb.NewImage["v"].(*types.AttributeValueMemberN).Value, &v)
				if v != last[id]+1 {
					t.Fatalf("item %s: version %d after %d", id, v, last[id])
				}
				last[id] = v
			}
			if len(last) != writers*items {
				t.Fatalf("%d items read, want %d", len(last), writers*items)
			}
			for id, v := range last {
				if v != versions {
					t.Fatalf("item %s: last version %d, want %d", id, v, versions)
				}
			}
		})
	}
}

// readAllQuiet is readAll for a reader racing the writers: it stops at the
// first error instead of failing the test (a shard may be listed open and
// close while it is read).
func readAllQuiet(c *dynamodbstreams.Client, arn string) error {
	ctx := context.Background()
	var start *string
	for {
		d, err := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arn, ExclusiveStartShardId: start})
		if err != nil {
			return err
		}
		for _, sh := range d.StreamDescription.Shards {
			it, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: sh.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
			if err != nil {
				return err
			}
			if _, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator}); err != nil {
				return err
			}
		}
		if start = d.StreamDescription.LastEvaluatedShardId; start == nil {
			return nil
		}
	}
}
