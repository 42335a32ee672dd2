package conformance

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestConformance_Concurrency_AtomicCounter: concurrent ADDs on one item are
// each applied exactly once (every write to one item is atomic).
func TestConformance_Concurrency_AtomicCounter(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := ddb(t).UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("ctr")},
					UpdateExpression: aws.String("ADD n :one"), ExpressionAttributeValues: Item{":one": n("1")}})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("UpdateItem ADD: %v", err)
	}
	requireItem(t, Item{"pk": s("ctr"), "n": n(fmt.Sprint(workers * each))}, get(t, tbl, Item{"pk": s("ctr")}), "counter after concurrent ADDs")
}

// TestConformance_Concurrency_ConditionalCreate: of many concurrent puts
// conditioned on attribute_not_exists, exactly one succeeds.
func TestConformance_Concurrency_ConditionalCreate(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	const racers = 16
	var wins, ccfs atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := ddb(t).PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: Item{"pk": s("once"), "by": n(fmt.Sprint(i))},
				ConditionExpression: aws.String("attribute_not_exists(pk)")})
			var ccf *types.ConditionalCheckFailedException
			switch {
			case err == nil:
				wins.Add(1)
			case errors.As(err, &ccf):
				ccfs.Add(1)
			default:
				t.Errorf("PutItem: %v", err)
			}
		}(i)
	}
	wg.Wait()
	if wins.Load() != 1 || ccfs.Load() != racers-1 {
		t.Fatalf("%d puts succeeded and %d failed their condition; want 1 and %d", wins.Load(), ccfs.Load(), racers-1)
	}
}

// TestConformance_Concurrency_TransferInvariant: concurrent transactions
// moving value between two items never expose or store a torn state; a
// transaction either applies whole or is canceled.
func TestConformance_Concurrency_TransferInvariant(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("x"), "bal": n("100")}, Item{"pk": s("y"), "bal": n("100")})
	const workers, each = 6, 15
	var applied atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			from, to := "x", "y"
			if w%2 == 1 {
				from, to = "y", "x"
			}
			for i := 0; i < each; i++ {
				_, err := ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Update: &types.Update{TableName: aws.String(tbl), Key: Item{"pk": s(from)}, UpdateExpression: aws.String("SET bal = bal - :d"),
						ConditionExpression: aws.String("bal >= :d"), ExpressionAttributeValues: Item{":d": n("7")}}},
					{Update: &types.Update{TableName: aws.String(tbl), Key: Item{"pk": s(to)}, UpdateExpression: aws.String("SET bal = bal + :d"),
						ExpressionAttributeValues: Item{":d": n("7")}}},
				}})
				var tce *types.TransactionCanceledException
				switch {
				case err == nil:
					applied.Add(1)
				case errors.As(err, &tce):
					// canceled (condition or conflict): nothing applied
				default:
					t.Errorf("TransactWriteItems: %v", err)
				}
				out, err := ddb(t).TransactGetItems(ctx(t), &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
					{Get: &types.Get{TableName: aws.String(tbl), Key: Item{"pk": s("x")}}},
					{Get: &types.Get{TableName: aws.String(tbl), Key: Item{"pk": s("y")}}},
				}})
				if err != nil {
					if errors.As(err, &tce) {
						continue // a read canceled by a conflicting write
					}
					t.Errorf("TransactGetItems: %v", err)
					continue
				}
				if sum := balance(out.Responses[0].Item) + balance(out.Responses[1].Item); sum != 200 {
					t.Errorf("TransactGetItems saw x+y = %d mid-flight, want 200", sum)
				}
			}
		}(w)
	}
	wg.Wait()
	x, y := balance(get(t, tbl, Item{"pk": s("x")})), balance(get(t, tbl, Item{"pk": s("y")}))
	if x+y != 200 || x < 0 || y < 0 || applied.Load() == 0 {
		t.Fatalf("after %d applied transfers x=%d y=%d; want x+y=200, both >= 0", applied.Load(), x, y)
	}
}

func balance(it Item) int {
	var v int
	if nv, ok := it["bal"].(*types.AttributeValueMemberN); ok {
		fmt.Sscan(nv.Value, &v)
	}
	return v
}
