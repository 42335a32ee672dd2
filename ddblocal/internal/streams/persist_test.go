package streams

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"go.etcd.io/bbolt"
)

func openDB(t testing.TB, path string) *bbolt.DB {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // after the registries' cleanups, which run first
	return db
}

func TestConformance_Streams_PersistAcrossReopen(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "ddb.bolt")
	db := openDB(t, path)
	r, err := NewRegistry(Options{DB: db, Now: clk.Now, ShardMaxRecords: 4})
	if err != nil {
		t.Fatal(err)
	}
	arn, _ := r.Enable("T", ViewNewAndOldImages, []string{"pk"})
	gone, _ := r.Enable("Gone", ViewKeysOnly, []string{"pk"})
	r.Record(gone, insert("x", 1))
	r.Disable(gone)
	for v := 1; v <= 10; v++ {
		r.Record(arn, modify("a", v-1, v))
	}
	c := serve(t, r)
	before := shards(t, c, arn)
	beforeRecs := readAll(t, c, arn)
	sh := before[len(before)-1]
	latest, _ := c.GetShardIterator(context.Background(), &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: sh.ShardId, ShardIteratorType: types.ShardIteratorTypeLatest})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, path)
	r2 := newRegistry(t, Options{DB: db, Now: clk.Now, ShardMaxRecords: 4})
	c2 := serve(t, r2)
	after := shards(t, c2, arn)
	if fmt.Sprint(shardIDs(after)) != fmt.Sprint(shardIDs(before)) {
		t.Fatalf("shards after reopen %v, before %v", shardIDs(after), shardIDs(before))
	}
	for i := range after {
		if aws.ToString(after[i].ParentShardId) != aws.ToString(before[i].ParentShardId) ||
			aws.ToString(after[i].SequenceNumberRange.EndingSequenceNumber) != aws.ToString(before[i].SequenceNumberRange.EndingSequenceNumber) {
			t.Fatalf("shard %d differs after reopen", i)
		}
	}
	afterRecs := readAll(t, c2, arn)
	if len(afterRecs) != len(beforeRecs) {
		t.Fatalf("%d records after reopen, %d before", len(afterRecs), len(beforeRecs))
	}
	for i := range afterRecs {
		a, b := afterRecs[i], beforeRecs[i]
		if *a.Dynamodb.SequenceNumber != *b.Dynamodb.SequenceNumber || *a.EventID != *b.EventID ||
			a.Dynamodb.OldImage["v"].(*types.AttributeValueMemberN).Value != b.Dynamodb.OldImage["v"].(*types.AttributeValueMemberN).Value ||
			*a.Dynamodb.SizeBytes != *b.Dynamodb.SizeBytes || !a.Dynamodb.ApproximateCreationDateTime.Equal(*b.Dynamodb.ApproximateCreationDateTime) {
			t.Fatalf("record %d differs after reopen", i)
		}
	}
	d, err := c2.DescribeStream(context.Background(), &dynamodbstreams.DescribeStreamInput{StreamArn: &gone})
	if err != nil || d.StreamDescription.StreamStatus != types.StreamStatusDisabled {
		t.Fatalf("disabled stream after reopen: %v", err)
	}

	// An iterator issued before the restart still reads, and new records
	// get sequence numbers above every old one.
	r2.Record(arn, modify("a", 10, 11))
	got, _ := drain(t, c2, latest.ShardIterator)
	if len(got) != 1 || *got[0].Dynamodb.SequenceNumber <= *afterRecs[len(afterRecs)-1].Dynamodb.SequenceNumber {
		t.Fatalf("after reopen the LATEST iterator read %d records", len(got))
	}
}

func TestConformance_Streams_PersistTrimsAndDrops(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "ddb.bolt")
	db := openDB(t, path)
	r := newRegistry(t, Options{DB: db, Now: clk.Now, ShardMaxRecords: 1, ShardMaxAge: 1000 * time.Hour})
	arn, _ := r.Enable("T", ViewKeysOnly, []string{"pk"})
	dropped, _ := r.Enable("D", ViewKeysOnly, []string{"pk"})
	r.Record(arn, insert("old", 1))
	r.Disable(dropped)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	clk.Advance(25 * time.Hour)
	r.Record(arn, insert("new", 1))
	c := serve(t, r)
	_ = shards(t, c, arn) // trims, and drops the disabled stream
	if l, _ := c.ListStreams(context.Background(), &dynamodbstreams.ListStreamsInput{}); len(l.Streams) != 1 {
		t.Fatalf("ListStreams: %d streams, want 1", len(l.Streams))
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	count := 0
	err := db.View(func(tx *bbolt.Tx) error {
		all := tx.Bucket(rootBucket).Bucket(streamsBucket)
		if all.Bucket([]byte(dropped)) != nil {
			t.Error("dropped stream still in the database")
		}
		return all.Bucket([]byte(arn)).Bucket(recordsBucket).ForEachBucket(func(k []byte) error {
			count += all.Bucket([]byte(arn)).Bucket(recordsBucket).Bucket(k).Stats().KeyN
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if count != 1 {
		t.Fatalf("%d records in the database, want 1 (the trimmed one deleted)", count)
	}
}

func shardIDs(shs []types.Shard) []string {
	ids := make([]string, len(shs))
	for i, sh := range shs {
		ids[i] = *sh.ShardId
	}
	return ids
}

// TestConformance_Streams_ConcurrentRecordAndRead hammers Record from several
// writers (one item each, as the server serialises writes per item) while
// a reader follows the lineage; run it with -race.
func TestConformance_Streams_ConcurrentRecordAndRead(t *testing.T) {
	for _, persist := range []bool{false, true} {
		t.Run(fmt.Sprint("persist=", persist), func(t *testing.T) {
			opts := Options{ShardMaxRecords: 50}
			if persist {
				db := openDB(t, filepath.Join(t.TempDir(), "ddb.bolt"))
				opts.DB = db
			}
			r := newRegistry(t, opts)
			arn, _ := r.Enable("T", ViewNewImage, []string{"pk"})
			const writers, perWriter = 4, 300
			var wg sync.WaitGroup
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					id := fmt.Sprint("item", w)
					for v := 1; v <= perWriter; v++ {
						r.Record(arn, modify(id, v-1, v))
					}
				}(w)
			}
			stop := make(chan struct{})
			readerDone := make(chan struct{})
			go func() { // concurrent reader
				defer close(readerDone)
				for {
					select {
					case <-stop:
						return
					default:
					}
					var d struct{ StreamDescription streamDescription }
					if err := call(t, r, "DescribeStream", map[string]any{"StreamArn": arn}, &d); err != nil {
						t.Error(err)
						return
					}
					for _, sh := range d.StreamDescription.Shards {
						var it getShardIteratorOut
						if err := call(t, r, "GetShardIterator", map[string]any{"StreamArn": arn, "ShardId": sh.ShardId, "ShardIteratorType": "TRIM_HORIZON"}, &it); err != nil {
							t.Error(err)
							return
						}
						if err := call(t, r, "GetRecords", map[string]any{"ShardIterator": it.ShardIterator}, nil); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
			wg.Wait()
			close(stop)
			<-readerDone

			c := serve(t, r)
			recs := readAll(t, c, arn)
			if len(recs) != writers*perWriter {
				t.Fatalf("read %d records, want %d", len(recs), writers*perWriter)
			}
			last := map[string]int{}
			for _, rec := range recs {
				id := rec.Dynamodb.Keys["pk"].(*types.AttributeValueMemberS).Value
				var v int
				fmt.Sscan(rec.Dynamodb.NewImage["v"].(*types.AttributeValueMemberN).Value, &v)
				if v != last[id]+1 {
					t.Fatalf("item %s: version %d after %d", id, v, last[id])
				}
				last[id] = v
			}
		})
	}
}

// TestConformance_Streams_NoSequenceReuseAfterCrash reopens a database whose
// last records were never flushed (a crash): the numbers those records had
// must not be handed out again.
func TestConformance_Streams_NoSequenceReuseAfterCrash(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "ddb.bolt"))
	r1 := newRegistry(t, Options{Shards: 1, DB: db, FlushDelay: time.Hour})
	arn, _ := r1.Enable("T", ViewKeysOnly, []string{"pk"})
	r1.Record(arn, insert("flushed", 1))
	if err := r1.Flush(); err != nil {
		t.Fatal(err)
	}
	r1.Record(arn, insert("lost", 1)) // never flushed before the "crash"
	lost := readAll(t, serve(t, r1), arn)
	if len(lost) != 2 {
		t.Fatalf("first run read %d records", len(lost))
	}

	r2 := newRegistry(t, Options{Shards: 1, DB: db})
	c2 := serve(t, r2)
	if got := readAll(t, c2, arn); len(got) != 1 {
		t.Fatalf("after the crash %d records, want the 1 flushed", len(got))
	}
	r2.Record(arn, insert("next", 1))
	got := readAll(t, c2, arn)
	if len(got) != 2 || *got[1].Dynamodb.SequenceNumber <= *lost[1].Dynamodb.SequenceNumber {
		t.Fatalf("new record got sequence number %s, not above the lost one's %s",
			*got[len(got)-1].Dynamodb.SequenceNumber, *lost[1].Dynamodb.SequenceNumber)
	}
}
