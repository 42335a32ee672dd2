package ddblocal

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
)

func TestK3_Smoke(t *testing.T) {
	srv := startServer(t, Options{})
	kc := kclient(srv)
	mkStream(t, kc, "s1", 2)
	for i := 0; i < 5; i++ {
		if _, err := kc.PutRecord(ctxT(t), &kinesis.PutRecordInput{StreamName: aws.String("s1"), PartitionKey: aws.String(string(rune('a' + i))), Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, sh := range allShards(t, kc, "s1", nil) {
		rs, _ := readShard(t, kc, "s1", *sh.ShardId)
		n += len(rs)
	}
	if n != 5 {
		t.Fatalf("read %d", n)
	}
}
