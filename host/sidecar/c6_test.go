package sidecar_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// A lease taken over by another worker (here written into the table as
// that worker's take would) is logged by the worker that lost it, with the
// new owner, whether its next renewal or its next checkpoint finds it.
func TestC6_ALeaseLostToAnotherWorkerIsLoggedWithTheNewOwner(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{}, host.SidecarConfig{})
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "a", 0, 1)
	var logs syncbuf.Buffer
	r := e.readerLogging(t, h, "w-a", nil, slog.New(slog.NewJSONHandler(&logs, nil)))
	stop := run(r)
	defer stop(nil)
	var shard string
	deadline := time.Now().Add(30 * time.Second)
	for shard == "" {
		for k, l := range e.leases(t) {
			if l.owner == "w-a" {
				shard = k
			}
		}
		require.True(t, time.Now().Before(deadline), "w-a never took the lease")
		time.Sleep(10 * time.Millisecond)
	}
	_, err := e.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(e.cfg.Sidecar.LeaseTable),
		Key:              map[string]types.AttributeValue{"leaseKey": &types.AttributeValueMemberS{Value: shard}},
		UpdateExpression: aws.String("SET leaseOwner = :b, leaseCounter = leaseCounter + :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":b": &types.AttributeValueMemberS{Value: "w-b"},
			":one": &types.AttributeValueMemberN{Value: "1"}}})
	require.NoError(t, err)
	for !strings.Contains(logs.String(), `"msg":"lease lost to another worker; stopping the shard's reading","shard":"`+shard+`","newOwner":"w-b"`) {
		require.True(t, time.Now().Before(deadline), "no lost lease logged with its new owner:\n%s", logs.String())
		time.Sleep(10 * time.Millisecond)
	}
}

// A lease handed over on request names no owner once released, so the
// worker that takes it says it was released to it rather than logging an
// empty previous owner.
func TestC6_ALeaseHandedOverIsLoggedByItsTakerAsReleasedToIt(t *testing.T) {
	e := start(t, ddblocal.StreamOptions{Shards: 4}, host.SidecarConfig{LeaseDuration: host.Duration(time.Second)})
	h := e.host(t, &testlogic.Ledger{})
	appendAdds(t, h, "a", 0, 1)
	stopA := run(e.reader(t, h, "w-a", nil))
	defer stopA(nil)
	deadline := time.Now().Add(time.Minute)
	for {
		held := 0
		for _, l := range e.leases(t) {
			if l.owner == "w-a" {
				held++
			}
		}
		if held == 4 {
			break
		}
		require.True(t, time.Now().Before(deadline), "w-a never held all four leases")
		time.Sleep(10 * time.Millisecond)
	}
	var logs syncbuf.Buffer
	stopB := run(e.readerLogging(t, e.host(t, &testlogic.Ledger{}), "w-b", nil, slog.New(slog.NewJSONHandler(&logs, nil))))
	defer stopB(nil)
	for !strings.Contains(logs.String(), `"previousOwner":"(released to this worker on its request)"`) {
		require.True(t, time.Now().Before(deadline), "w-b took no lease handed over to it, or did not say so:\n%s", logs.String())
		time.Sleep(10 * time.Millisecond)
	}
	require.NotContains(t, logs.String(), `"previousOwner":""`, "a lease taken with no previous owner named")
}
