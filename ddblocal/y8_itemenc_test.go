package ddblocal

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestY8_GetItemAnswersTheItemStoredNow: a GetItem answers the item as
// stored at its read, though the encoding of a row read before is kept
// with the row: after a put that replaces it, an update, a delete and a
// put again, through a projection, an eventually consistent read, and
// with writers and readers of the same keys at once.
func TestY8_GetItemAnswersTheItemStoredNow(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "enc", true)
	key := map[string]types.AttributeValue{"pk": s("a"), "sk": s("1")}
	get := func(consistent bool, proj string) map[string]types.AttributeValue {
		t.Helper()
		in := &dynamodb.GetItemInput{TableName: aws.String("enc"), Key: key, ConsistentRead: aws.Bool(consistent)}
		if proj != "" {
			in.ProjectionExpression = aws.String(proj)
		}
		out, err := c.GetItem(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	want := func(item map[string]types.AttributeValue, v string) {
		t.Helper()
		if v == "" {
			if item != nil {
				t.Fatalf("got %v, want no item", item)
			}
			return
		}
		got, ok := item["v"].(*types.AttributeValueMemberS)
		if !ok || got.Value != v {
			t.Fatalf("got %#v, want v = %q", item["v"], v)
		}
	}
	put := func(v string) {
		t.Helper()
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("enc"),
			Item: map[string]types.AttributeValue{"pk": s("a"), "sk": s("1"), "v": s(v), "w": s(strings.Repeat("w", len(v)))}}); err != nil {
			t.Fatal(err)
		}
	}
	put("one")
	want(get(true, ""), "one")
	want(get(true, ""), "one") // from the kept encoding
	put("two")
	want(get(true, ""), "two")
	want(get(true, ""), "two")
	if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("enc"), Key: key,
		UpdateExpression: aws.String("SET v = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("three")}}); err != nil {
		t.Fatal(err)
	}
	want(get(true, ""), "three")
	if p := get(true, "v"); len(p) != 1 {
		t.Fatalf("projected to v: %v", p)
	}
	want(get(false, ""), "three")
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("enc"), Key: key}); err != nil {
		t.Fatal(err)
	}
	want(get(true, ""), "")
	put("four")
	want(get(true, ""), "four")
	// a row inserted before the one read moves it in its partition
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("enc"),
		Item: map[string]types.AttributeValue{"pk": s("a"), "sk": s("0"), "v": s("zero")}}); err != nil {
		t.Fatal(err)
	}
	want(get(true, ""), "four")
	// a row deleted before the one read moves it back: rows 0, 1 (key)
	// and 2, each read, then row 0 deleted
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("enc"),
		Item: map[string]types.AttributeValue{"pk": s("a"), "sk": s("2"), "v": s("two")}}); err != nil {
		t.Fatal(err)
	}
	for _, sk := range []string{"0", "1", "2"} {
		key = map[string]types.AttributeValue{"pk": s("a"), "sk": s(sk)}
		get(true, "")
	}
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("enc"), Key: map[string]types.AttributeValue{"pk": s("a"), "sk": s("0")}}); err != nil {
		t.Fatal(err)
	}
	want(get(true, ""), "two")
	key = map[string]types.AttributeValue{"pk": s("a"), "sk": s("1")}
	want(get(true, ""), "four")

	// writers and readers at once: every item read is one that was written whole
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 100 {
				v := fmt.Sprintf("w%d-%d", w, i)
				sk := strconv.Itoa(i % 5)
				if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("enc"),
					Item: map[string]types.AttributeValue{"pk": s("b"), "sk": s(sk), "v": s(v), "sk2": n(sk)}}); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range 200 {
				sk := strconv.Itoa(i % 5)
				out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("enc"), ConsistentRead: aws.Bool(true),
					Key: map[string]types.AttributeValue{"pk": s("b"), "sk": s(sk)}})
				if err != nil {
					errs <- err
					return
				}
				if out.Item != nil && !reflect.DeepEqual(out.Item["sk2"], n(sk)) {
					errs <- fmt.Errorf("GetItem of sk %s answered the item %v", sk, out.Item)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
