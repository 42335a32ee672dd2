package ddblocal

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
)

func putW(t *testing.T, db *dynamodb.Client, table, pk, w string) {
	t.Helper()
	if _, err := db.PutItem(ctxT(t), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": s(pk), "w": s(w)}}); err != nil {
		t.Fatalf("PutItem %s: %v", pk, err)
	}
}

func tokens(changes []ddbChange) string {
	var out []string
	for _, c := range changes {
		w := ""
		if v, ok := c.Dynamodb.NewImage["w"]; ok {
			w = v["S"].(string)
		}
		out = append(out, c.Dynamodb.Keys["pk"]["S"].(string)+":"+c.EventName[:1]+w)
	}
	return strings.Join(out, " ")
}

// TestK3_ReorderingHoldsARecordBackUntilTheNextOfItsShard: with every
// record reordered, each record is held back and written after the next
// record of its shard, so pairs arrive swapped, one item's MODIFY before
// its INSERT included; a record still held is written when its shard is
// read. Nothing is lost.
func TestK3_ReorderingHoldsARecordBackUntilTheNextOfItsShard(t *testing.T) {
	srv := startServer(t, Options{Kinesis: KinesisOptions{Faults: KinesisFaults{ReorderRate: 1}}})
	db := client(srv, 1)
	kc := kclient(srv)
	destTable(t, srv, "tbl", 1, "")
	putW(t, db, "tbl", "a", "1")
	putW(t, db, "tbl", "b", "1")
	putW(t, db, "tbl", "x", "1")
	putW(t, db, "tbl", "x", "2") // the same item: MODIFY goes before INSERT
	putW(t, db, "tbl", "c", "1")
	shards, err := srv.KinesisShards(context.Background(), "tbl-changes")
	if err != nil || len(shards) != 1 || !shards[0].Held || shards[0].Records != 4 {
		t.Fatalf("before the read: %v %+v; want 4 records and one held", err, shards)
	}
	_, changes := streamRecords(t, kc, "tbl-changes")
	if got, want := tokens(changes), "b:I1 a:I1 x:M2 x:I1 c:I1"; got != want {
		t.Errorf("records %q, want %q", got, want)
	}
	shards, _ = srv.KinesisShards(context.Background(), "tbl-changes")
	if shards[0].Held {
		t.Errorf("a record is still held after the shard was read")
	}
}

// TestK3_DuplicatesWriteARecordTwiceWithTheSameEventID: with every record
// duplicated, each change is in the stream twice, same data and eventID,
// distinct sequence numbers; PutRecord's records are never duplicated.
func TestK3_DuplicatesWriteARecordTwiceWithTheSameEventID(t *testing.T) {
	srv := startServer(t, Options{})
	srv.SetKinesisFaults(KinesisFaults{DuplicateRate: 1})
	db := client(srv, 1)
	kc := kclient(srv)
	destTable(t, srv, "tbl", 2, "")
	putW(t, db, "tbl", "a", "1")
	putW(t, db, "tbl", "a", "2")
	if _, err := kc.PutRecord(ctxT(t), &kinesis.PutRecordInput{StreamName: aws.String("tbl-changes"), PartitionKey: aws.String("k"), Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	recs, changes := streamRecords(t, kc, "tbl-changes")
	var got []string
	seqs := map[string]bool{}
	for i, c := range changes {
		if c.EventName == "" {
			got = append(got, "put")
		} else {
			got = append(got, c.EventName+"/"+c.EventID)
		}
		seqs[aws.ToString(recs[i].SequenceNumber)] = true
	}
	if len(got) != 5 || len(seqs) != 5 {
		t.Fatalf("records %v (%d sequence numbers), want two of each change and one put", got, len(seqs))
	}
	counts := map[string]int{}
	for _, g := range got {
		counts[g]++
	}
	for g, n := range counts {
		if want := map[bool]int{true: 1, false: 2}[g == "put"]; n != want {
			t.Errorf("%s appears %d times, want %d", g, n, want)
		}
	}
	srv.SetKinesisFaults(KinesisFaults{})
	putW(t, db, "tbl", "b", "1")
	if _, changes := streamRecords(t, kc, "tbl-changes"); len(changes) != 6 {
		t.Errorf("with faults off, a write added %d records, want 1", len(changes)-5)
	}
}

// TestK3_FaultsAtRandomLoseNothing: with a fifth of the records duplicated
// and a fifth reordered (seeded), every write is in the stream at least
// once, duplicates and reorderings both happened, and no record names a
// write that was not made.
func TestK3_FaultsAtRandomLoseNothing(t *testing.T) {
	srv := startServer(t, Options{Kinesis: KinesisOptions{Faults: KinesisFaults{DuplicateRate: 0.2, ReorderRate: 0.2, Seed: 7}}})
	db := client(srv, 1)
	kc := kclient(srv)
	destTable(t, srv, "tbl", 3, "")
	const items, writes = 8, 200
	for i := 0; i < writes; i++ {
		putW(t, db, "tbl", fmt.Sprintf("i%d", i%items), fmt.Sprint(i))
	}
	_, changes := streamRecords(t, kc, "tbl-changes")
	seen := map[string]int{}
	perItem := map[string][]int{}
	for _, c := range changes {
		w := c.Dynamodb.NewImage["w"]["S"].(string)
		seen[w]++
		var n int
		fmt.Sscan(w, &n)
		perItem[c.Dynamodb.Keys["pk"]["S"].(string)] = append(perItem[c.Dynamodb.Keys["pk"]["S"].(string)], n)
	}
	dups, swaps := 0, 0
	for i := 0; i < writes; i++ {
		switch seen[fmt.Sprint(i)] {
		case 0:
			t.Errorf("write %d is not in the stream", i)
		case 1:
		default:
			dups++
		}
	}
	for _, ns := range perItem {
		for j := 1; j < len(ns); j++ {
			if ns[j] < ns[j-1] {
				swaps++
			}
		}
	}
	if len(seen) != writes {
		t.Errorf("%d distinct writes in the stream, want %d", len(seen), writes)
	}
	if dups == 0 || swaps == 0 {
		t.Errorf("%d duplicated writes and %d records of an item before an earlier one: the faults did not fire", dups, swaps)
	}
	t.Logf("%d records for %d writes: %d duplicated, %d out of order within an item", len(changes), writes, dups, swaps)
}
