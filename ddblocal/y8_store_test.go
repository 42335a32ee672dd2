package ddblocal

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// storedFreelist reports whether the newest meta page of the data file in
// dir names a stored freelist (bbolt's "no freelist" page id otherwise).
func storedFreelist(t *testing.T, dir string) bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, dataFileName))
	if err != nil {
		t.Fatal(err)
	}
	var best boltMeta
	var freelist uint64
	found := false
	for _, off := range []int{0, os.Getpagesize()} {
		if off+boltPageHeader+boltMetaSize > len(raw) {
			continue
		}
		b := raw[off+boltPageHeader:]
		m, ok := parseBoltMeta(b)
		if ok && (!found || m.txid > best.txid) {
			best, found = m, true
			freelist = binary.LittleEndian.Uint64(b[32:]) // after magic, version, page size, flags, root bucket
		}
	}
	if !found {
		t.Fatalf("%s has no valid meta page", dir)
	}
	return freelist != ^uint64(0)
}

// freelistWorkload writes a round of items to table "flist" (creating it, with
// a stream, on the first round), replaces some and deletes some (freeing
// pages), and returns the items every round so far leaves, by key.
func freelistWorkload(t *testing.T, s *Server, round int, want map[string]string) {
	t.Helper()
	c := client(s, 1)
	ctx := ctxT(t)
	if round == 0 {
		mkTable(t, c, "flist", true, func(in *dynamodb.CreateTableInput) {
			in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
		})
	}
	const n = 300
	for i := range n {
		pk, sk := fmt.Sprintf("p%d", i%7), fmt.Sprintf("r%d-%04d", round, i)
		v := fmt.Sprintf("round %d item %d %0200d", round, i, i)
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("flist"), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk},
			"v": &types.AttributeValueMemberS{Value: v}}}); err != nil {
			t.Fatalf("round %d PutItem %d: %v", round, i, err)
		}
		want[pk+"/"+sk] = v
	}
	for i := 0; i < n; i += 3 {
		pk, sk := fmt.Sprintf("p%d", i%7), fmt.Sprintf("r%d-%04d", round, i)
		if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("flist"), Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}}); err != nil {
			t.Fatalf("round %d DeleteItem %d: %v", round, i, err)
		}
		delete(want, pk+"/"+sk)
	}
}

// checkFreelistItems scans table "flist" and compares it with want.
func checkFreelistItems(t *testing.T, s *Server, want map[string]string, when string) {
	t.Helper()
	c := client(s, 1)
	got := map[string]string{}
	p := dynamodb.NewScanPaginator(c, &dynamodb.ScanInput{TableName: aws.String("flist"), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctxT(t))
		if err != nil {
			t.Fatalf("%s: Scan: %v", when, err)
		}
		for _, it := range out.Items {
			pk := it["pk"].(*types.AttributeValueMemberS).Value
			sk := it["sk"].(*types.AttributeValueMemberS).Value
			got[pk+"/"+sk] = it["v"].(*types.AttributeValueMemberS).Value
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d items, want %d", when, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: item %s = %.30q, want %.30q", when, k, got[k], v)
		}
	}
}

// TestY8_DataDirOpensWhetherItsFreelistIsStoredOrNot writes a data
// directory with the earlier settings (the freelist stored with every
// commit) and opens it with the current ones (freelist rebuilt when the
// file is opened), and the reverse: every item and stream record is there,
// writes go on, and the file moves back again.
func TestY8_DataDirOpensWhetherItsFreelistIsStoredOrNot(t *testing.T) {
	defer func(v bool) { storeFreelistSync = v }(storeFreelistSync)
	for _, first := range []bool{true, false} {
		name := map[bool]string{true: "stored-then-rebuilt", false: "rebuilt-then-stored"}[first]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			want := map[string]string{}
			records := 0
			for round, sync := range []bool{first, !first, first} {
				storeFreelistSync = sync
				s, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
				if err != nil {
					t.Fatalf("round %d (freelist stored: %v): Start: %v", round, sync, err)
				}
				if round > 0 {
					checkFreelistItems(t, s, want, "reopened with freelist stored: "+strconv.FormatBool(sync))
					if n := countStreamRecords(t, s, "flist"); n != records {
						t.Errorf("round %d: %d stream records after reopening, want %d", round, n, records)
					}
				}
				freelistWorkload(t, s, round, want)
				records += 300 + 100
				checkFreelistItems(t, s, want, fmt.Sprintf("round %d written", round))
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if got := storedFreelist(t, dir); got != sync {
					t.Fatalf("round %d: the data file's freelist stored = %v, want %v (the setting did not apply)", round, got, sync)
				}
			}
		})
	}
}

// countStreamRecords counts the records of every shard of table's latest
// stream (through a client that retries: the answers are large, and a
// loaded machine has dropped a connection reading one).
func countStreamRecords(t *testing.T, s *Server, table string) int {
	t.Helper()
	ctx := ctxT(t)
	d, err := client(s, 3).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	sc := dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.Endpoint()),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", ""), RetryMaxAttempts: 3})
	ds, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: d.Table.LatestStreamArn})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sh := range ds.StreamDescription.Shards {
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: d.Table.LatestStreamArn,
			ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		for iter := it.ShardIterator; iter != nil; {
			out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Records) == 0 {
				break
			}
			n += len(out.Records)
			iter = out.NextShardIterator
		}
	}
	return n
}
