package ddblocal

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestTxn_AllOrNothing(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "tx1", false)
	mkTable(t, c, "tx2", false)
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("tx2"), Item: map[string]types.AttributeValue{"pk": s("taken"), "v": n("1")}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("tx1"), Item: map[string]types.AttributeValue{"pk": s("new")}}},
		{Put: &types.Put{TableName: aws.String("tx2"), Item: map[string]types.AttributeValue{"pk": s("taken")},
			ConditionExpression: aws.String("attribute_not_exists(pk)"), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("want TransactionCanceledException, got %v", err)
	}
	if len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[0].Code) != "None" ||
		aws.ToString(tce.CancellationReasons[1].Code) != "ConditionalCheckFailed" || tce.CancellationReasons[1].Item["v"] == nil {
		t.Fatalf("reasons = %+v", tce.CancellationReasons)
	}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("tx1"), Key: map[string]types.AttributeValue{"pk": s("new")}})
	if err != nil || out.Item != nil {
		t.Fatalf("first put of a cancelled transaction is visible: %v %v", out.Item, err)
	}
	// Two operations on one item.
	_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("tx1"), Item: map[string]types.AttributeValue{"pk": s("a")}}},
		{Delete: &types.Delete{TableName: aws.String("tx1"), Key: map[string]types.AttributeValue{"pk": s("a")}}},
	}})
	var ve interface{ ErrorMessage() string }
	if !errors.As(err, &ve) || ve.ErrorMessage() != "Transaction request cannot include multiple operations on one item" {
		t.Fatalf("two ops on one item: %v", err)
	}
}

func TestTxn_IdempotentToken(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "idem", false)
	in := &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String("tok-1"), TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: aws.String("idem"), Key: map[string]types.AttributeValue{"pk": s("a")},
			UpdateExpression: aws.String("ADD n :one"), ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1")}}},
	}}
	for i := 0; i < 3; i++ {
		if _, err := c.TransactWriteItems(ctx, in); err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("idem"), Key: map[string]types.AttributeValue{"pk": s("a")}})
	if err != nil || out.Item["n"].(*types.AttributeValueMemberN).Value != "1" {
		t.Fatalf("after 3 calls with one token n = %v (%v), want 1", out.Item, err)
	}
	in.TransactItems[0].Update.ExpressionAttributeValues[":one"] = n("2")
	_, err = c.TransactWriteItems(ctx, in)
	var ipm *types.IdempotentParameterMismatchException
	if !errors.As(err, &ipm) {
		t.Fatalf("same token, different request: want IdempotentParameterMismatchException, got %v", err)
	}
}

// TestTxn_HammerConditionalIncrement runs many clients doing optimistic
// conditional increments of one counter; every success must count once.
func TestTxn_HammerConditionalIncrement(t *testing.T) {
	hammer(t, Options{}, 16, 25)
}

// TestTxn_HammerConditionalIncrementDataDir is the hammer with every write
// going through the bbolt store too.
func TestTxn_HammerConditionalIncrementDataDir(t *testing.T) {
	hammer(t, Options{DataDir: t.TempDir()}, 8, 10)
}

func hammer(t *testing.T, opts Options, workers, each int) {
	srv := startServer(t, opts)
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "hammer", false)
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("hammer"), Item: map[string]types.AttributeValue{"pk": s("ctr"), "n": n("0")}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for done := 0; done < each; {
				out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("hammer"), Key: map[string]types.AttributeValue{"pk": s("ctr")}, ConsistentRead: aws.Bool(true)})
				if err != nil {
					errs <- err
					return
				}
				cur := out.Item["n"].(*types.AttributeValueMemberN).Value
				var v int
				fmt.Sscan(cur, &v)
				var err2 error
				if w%2 == 0 {
					_, err2 = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("hammer"), Key: map[string]types.AttributeValue{"pk": s("ctr")},
						UpdateExpression: aws.String("SET n = :new"), ConditionExpression: aws.String("n = :cur"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":cur": n(cur), ":new": n(fmt.Sprint(v + 1))}})
				} else {
					_, err2 = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{
						TableName: aws.String("hammer"), Item: map[string]types.AttributeValue{"pk": s("ctr"), "n": n(fmt.Sprint(v + 1))},
						ConditionExpression: aws.String("n = :cur"), ExpressionAttributeValues: map[string]types.AttributeValue{":cur": n(cur)}}}}})
				}
				var ccf *types.ConditionalCheckFailedException
				var tce *types.TransactionCanceledException
				switch {
				case err2 == nil:
					done++
				case errors.As(err2, &ccf), errors.As(err2, &tce):
				default:
					errs <- err2
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("hammer"), Key: map[string]types.AttributeValue{"pk": s("ctr")}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Item["n"].(*types.AttributeValueMemberN).Value; got != fmt.Sprint(workers*each) {
		t.Fatalf("counter = %s, want %d", got, workers*each)
	}
}
