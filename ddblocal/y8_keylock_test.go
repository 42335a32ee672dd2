package ddblocal

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynafold/dynafold/abi"
)

// TestY8_IndependentKeysShareOneCommit holds the store's first commit
// until every other writer of an independent key has evaluated its write
// and queued behind it: they must get there (no table lock is held across
// a commit), and are then stored together in one more transaction, one
// fsync for all of them.
func TestY8_IndependentKeysShareOneCommit(t *testing.T) {
	const writers = 16
	s := startServer(t, Options{DataDir: t.TempDir()})
	c := client(s, 1)
	mkTable(t, c, "y8t", false)
	ctx := ctxT(t)
	commits0, writes0 := s.gc.commits.Load(), s.gc.writes.Load()
	// Keys of distinct item locks (two keys may share one, keylock.go).
	s.catMu.RLock()
	tbl := s.tables["y8t"]
	s.catMu.RUnlock()
	var keys []string
	stripes := map[int]bool{}
	for i := 0; len(keys) < writers; i++ {
		k := fmt.Sprintf("k%d", i)
		st := s.keys.stripe(itemRef{tbl, abi.Item{"pk": abi.Value{Kind: abi.KindS, Str: k}}})
		if !stripes[st] {
			stripes[st] = true
			keys = append(keys, k)
		}
	}

	queued := make(chan int, writers)
	var once sync.Once
	hook := func(event string, n int) {
		switch event {
		case "queued":
			queued <- n
		case "commit":
			once.Do(func() {
				// The first commit waits for the other writers to queue.
				guard := time.After(30 * time.Second) // a hung test, not a timing
				for i := 0; i < writers-1; i++ {
					select {
					case <-queued:
					case <-guard:
						t.Errorf("only %d of %d writers queued behind the first commit: writes of independent keys wait for each other", i, writers-1)
						return
					}
				}
			})
		}
	}
	s.gc.testHook.Store(&hook)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("y8t"), Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: keys[w]},
				"v":  &types.AttributeValueMemberN{Value: strconv.Itoa(w)},
			}})
			if err != nil {
				t.Errorf("PutItem %s: %v", keys[w], err)
			}
		}()
	}
	wg.Wait()
	s.gc.testHook.Store(nil)
	if got := s.gc.writes.Load() - writes0; got != writers {
		t.Errorf("the store committed %d writes, want %d", got, writers)
	}
	if got := s.gc.commits.Load() - commits0; got != 2 {
		t.Errorf("%d writes took %d store commits, want 2 (the first alone, the other %d together)", writers, got, writers-1)
	}
	for w := range writers {
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("y8t"), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: keys[w]}}})
		if err != nil {
			t.Fatalf("GetItem %s: %v", keys[w], err)
		}
		if v, ok := out.Item["v"].(*types.AttributeValueMemberN); !ok || v.Value != strconv.Itoa(w) {
			t.Errorf("%s: item %v, want v = %d", keys[w], out.Item, w)
		}
	}
}

// TestY8_ConditionalWritesOfOneKeyLoseNoUpdate has writers increment one
// item's version with a conditional update (version = the version they
// read); every update that succeeds must count: the final version is the
// number of successes, each attempted version succeeded at most once.
func TestY8_ConditionalWritesOfOneKeyLoseNoUpdate(t *testing.T) {
	inMemoryAndOnDisk(t, func(t *testing.T, c *dynamodb.Client) {
		ctx := ctxT(t)
		key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "one"}}
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("y8t"), Item: map[string]types.AttributeValue{
			"pk": key["pk"], "version": &types.AttributeValueMemberN{Value: "0"}}}); err != nil {
			t.Fatal(err)
		}
		const writers, each = 8, 15
		var mu sync.Mutex
		won := map[string]int{} // version written -> successes
		var wg sync.WaitGroup
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for done := 0; done < each; {
					out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("y8t"), Key: key, ConsistentRead: aws.Bool(true)})
					if err != nil {
						t.Errorf("GetItem: %v", err)
						return
					}
					v, _ := strconv.Atoi(out.Item["version"].(*types.AttributeValueMemberN).Value)
					next := strconv.Itoa(v + 1)
					_, err = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("y8t"), Key: key,
						UpdateExpression:    aws.String("SET version = :next"),
						ConditionExpression: aws.String("version = :v"),
						ExpressionAttributeValues: map[string]types.AttributeValue{
							":v": &types.AttributeValueMemberN{Value: strconv.Itoa(v)}, ":next": &types.AttributeValueMemberN{Value: next}},
					})
					var ccf *types.ConditionalCheckFailedException
					switch {
					case errors.As(err, &ccf):
						continue
					case err != nil:
						t.Errorf("UpdateItem: %v", err)
						return
					}
					mu.Lock()
					won[next]++
					mu.Unlock()
					done++
				}
			}()
		}
		wg.Wait()
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("y8t"), Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Item["version"].(*types.AttributeValueMemberN).Value; got != strconv.Itoa(writers*each) {
			t.Errorf("version %s after %d successful increments: an update was lost", got, writers*each)
		}
		for v, n := range won {
			if n != 1 {
				t.Errorf("version %s was written by %d conditional updates that each expected the version before it", v, n)
			}
		}
	})
}

// TestY8_TransactionsInEitherKeyOrderDoNotDeadlock runs transactions that
// add to two items, named in either order, beside single updates of each:
// every write completes and every increment counts.
func TestY8_TransactionsInEitherKeyOrderDoNotDeadlock(t *testing.T) {
	s := startServer(t, Options{DataDir: t.TempDir()})
	c := client(s, 1)
	mkTable(t, c, "y8t", false)
	ctx := ctxT(t)
	key := func(k string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: k}}
	}
	add := func(k string) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{TableName: aws.String("y8t"), Key: key(k),
			UpdateExpression:          aws.String("ADD n :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}}}
	}
	const rounds = 20
	var wg sync.WaitGroup
	txs, singles := 0, 0
	var mu sync.Mutex
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				var err error
				switch g % 3 {
				case 0:
					_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{add("a"), add("b")}})
				case 1:
					_, err = c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{add("b"), add("a")}})
				default:
					u := add([]string{"a", "b"}[g%2]).Update
					_, err = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ExpressionAttributeValues: u.ExpressionAttributeValues})
				}
				var tce *types.TransactionCanceledException
				if errors.As(err, &tce) {
					continue // a conflict with a transaction in progress, as DynamoDB may answer
				}
				if err != nil {
					t.Errorf("write: %v", err)
					return
				}
				mu.Lock()
				if g%3 == 2 {
					singles++
				} else {
					txs++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, k := range []string{"a", "b"} {
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("y8t"), Key: key(k), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(out.Item["n"].(*types.AttributeValueMemberN).Value)
		total += n
	}
	if want := 2*txs + singles; total != want {
		t.Errorf("a.n + b.n = %d after %d transactions of two increments and %d single increments, want %d", total, txs, singles, want)
	}
}

// TestY8_KillWithSixteenWritersLosesNoAcknowledgedWrite is the durability
// test with sixteen concurrent writers of independent items, so that
// their writes share store commits when the process is killed.
func TestY8_KillWithSixteenWritersLosesNoAcknowledgedWrite(t *testing.T) {
	runDurability(t, durabilityCase{cycles: 60, writers: 16})
}

// TestY8_ConcurrentRetriesOfOneTransactionApplyOnce sends one
// TransactWriteItems, with its ClientRequestToken, from several clients at
// once (as retries racing the first attempt): it must be applied once.
func TestY8_ConcurrentRetriesOfOneTransactionApplyOnce(t *testing.T) {
	inMemoryAndOnDisk(t, func(t *testing.T, c *dynamodb.Client) {
		ctx := ctxT(t)
		for round := range 10 {
			in := &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(fmt.Sprintf("token-%d", round)),
				TransactItems: []types.TransactWriteItem{{Update: &types.Update{TableName: aws.String("y8t"),
					Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "once"}},
					UpdateExpression:          aws.String("ADD n :one"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}}}}}
			var wg sync.WaitGroup
			for range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := c.TransactWriteItems(ctx, in); err != nil {
						var tce *types.TransactionCanceledException
						if !errors.As(err, &tce) {
							t.Errorf("TransactWriteItems: %v", err)
						}
					}
				}()
			}
			wg.Wait()
			out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("y8t"), ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "once"}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Item["n"].(*types.AttributeValueMemberN).Value; got != strconv.Itoa(round+1) {
				t.Fatalf("after %d transactions, each sent 6 times at once with its token, n = %s", round+1, got)
			}
		}
	})
}

// TestY8_BatchWriteIsOneStoreCommit: the 25 puts of a BatchWriteItem are
// stored in one store transaction (one fsync), and all of them are there.
func TestY8_BatchWriteIsOneStoreCommit(t *testing.T) {
	s := startServer(t, Options{DataDir: t.TempDir()})
	c := client(s, 1)
	mkTable(t, c, "y8t", false)
	ctx := ctxT(t)
	var reqs []types.WriteRequest
	for i := range 25 {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("b%d", i)}}}})
	}
	commits0 := s.gc.commits.Load()
	out, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"y8t": reqs}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.UnprocessedItems) != 0 {
		t.Fatalf("unprocessed items: %v", out.UnprocessedItems)
	}
	if got := s.gc.commits.Load() - commits0; got != 1 {
		t.Errorf("a BatchWriteItem of 25 puts took %d store commits, want 1", got)
	}
	scan, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("y8t"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Items) != 25 {
		t.Errorf("%d items after a BatchWriteItem of 25 puts", len(scan.Items))
	}
}

// inMemoryAndOnDisk runs f against a fresh ddblocal in memory and one with a
// data directory, each with a table "y8t" created by mkTable.
func inMemoryAndOnDisk(t *testing.T, f func(t *testing.T, c *dynamodb.Client)) {
	for _, mode := range []string{"memory", "data"} {
		t.Run(mode, func(t *testing.T) {
			opts := Options{}
			if mode == "data" {
				opts.DataDir = t.TempDir()
			}
			c := client(startServer(t, opts), 1)
			mkTable(t, c, "y8t", false)
			f(t, c)
		})
	}
}
