package ddblocal

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/streamsdk"
	"github.com/dynafold/dynafold/internal/ddbclient"
)

// The stream registry keeps the items a write stores, not copies of them
// (streams.Options.NoCopy): a record's images must stay the items as they
// were at its write, whatever later writes, reads and answers do with the
// same items. Every kind of write runs on a NEW_AND_OLD_IMAGES stream —
// updates of nested lists, maps and sets, values copied from one attribute
// to another and then changed, legacy AttributeUpdates, batch and
// transaction writes, replaces, deletes — with reads, projections and
// ReturnValues between them; after each write the items are read with a
// consistent GetItem, and at the end every record's Keys, OldImage and
// NewImage must be those reads.
func TestY8_StreamImagesAreTheItemsAtEachWrite(t *testing.T) {
	for _, store := range []string{"memory", "data"} {
		t.Run(store, func(t *testing.T) {
			opts := Options{Streams: StreamOptions{Shards: 1}}
			if store == "data" {
				opts.DataDir = t.TempDir()
			}
			srv := startServer(t, opts)
			c, sc := client(srv, 1), streamsClient(srv)
			ctx := ctxT(t)
			mkTable(t, c, "img", true, func(in *dynamodb.CreateTableInput) {
				in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
			})
			d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("img")})
			if err != nil {
				t.Fatal(err)
			}
			arn := aws.ToString(d.Table.LatestStreamArn)

			keys := []string{"a", "b", "c"}
			state := map[string]string{} // the item of each key as GetItem read it ("" absent)
			var want [][]string          // per step, its records (sorted)
			step := func(name string, write func() error) {
				t.Helper()
				if err := write(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var recs []string
				for _, k := range keys {
					out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("img"), Key: imgKey(k), ConsistentRead: aws.Bool(true)})
					if err != nil {
						t.Fatalf("%s: GetItem %s: %v", name, k, err)
					}
					now := ""
					if out.Item != nil {
						now = avItem(out.Item)
					}
					if now != state[k] {
						recs = append(recs, imgRecord(avItem(imgKey(k)), state[k], now))
						state[k] = now
					}
				}
				if len(recs) == 0 {
					t.Fatalf("%s changed nothing", name)
				}
				sort.Strings(recs)
				want = append(want, recs)
				// reads between the writes: a projection, a Query and a Scan
				if _, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("img"), Key: imgKey("a"), ProjectionExpression: aws.String("m.x[0], l[1], ss")}); err != nil {
					t.Fatalf("%s: GetItem with a projection: %v", name, err)
				}
				if _, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("img"), KeyConditionExpression: aws.String("pk = :p"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("p")}, ProjectionExpression: aws.String("m, l[0]")}); err != nil {
					t.Fatalf("%s: Query: %v", name, err)
				}
				if _, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("img")}); err != nil {
					t.Fatalf("%s: Scan: %v", name, err)
				}
			}
			update := func(k, expr string, vals map[string]types.AttributeValue) func() error {
				return func() error {
					_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("img"), Key: imgKey(k), UpdateExpression: aws.String(expr),
						ExpressionAttributeValues: vals, ReturnValues: types.ReturnValueAllNew})
					return err
				}
			}
			put := func(k string, extra map[string]types.AttributeValue) func() error {
				return func() error {
					_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("img"), Item: imgItem(k, extra), ReturnValues: types.ReturnValueAllOld})
					return err
				}
			}
			list := func(vs ...types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberL{Value: vs} }

			step("put a", put("a", nil))
			step("update nested list and map elements", update("a", "SET l[0] = :v, m.x[1] = :w, n = n + :one, l[5] = :z",
				map[string]types.AttributeValue{":v": s("v"), ":w": n("20"), ":one": n("1"), ":z": s("appended")}))
			step("copy a map and a list, add and delete set members", update("a", "SET c = m, cl = l ADD ss :r DELETE ns :ns",
				map[string]types.AttributeValue{":r": &types.AttributeValueMemberSS{Value: []string{"r"}}, ":ns": &types.AttributeValueMemberNS{Value: []string{"1"}}}))
			step("change the copies, remove elements", update("a", "SET c.x[0] = :q, cl[1] = :q, c.y = :q REMOVE l[1], m.y",
				map[string]types.AttributeValue{":q": s("changed")}))
			step("list_append and if_not_exists", update("a", "SET l = list_append(l, :lst), k = if_not_exists(k, m), m.x = list_append(:lst, m.x)",
				map[string]types.AttributeValue{":lst": list(n("7"), s("eight"))}))
			step("legacy AttributeUpdates", func() error {
				_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("img"), Key: imgKey("a"), AttributeUpdates: map[string]types.AttributeValueUpdate{
					"d":  {Action: types.AttributeActionPut, Value: list(s("legacy"))},
					"ss": {Action: types.AttributeActionAdd, Value: &types.AttributeValueMemberSS{Value: []string{"t"}}},
					"n":  {Action: types.AttributeActionDelete}}})
				return err
			})
			step("batch put b and c", func() error {
				_, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"img": {
					{PutRequest: &types.PutRequest{Item: imgItem("b", nil)}}, {PutRequest: &types.PutRequest{Item: imgItem("c", nil)}}}}})
				return err
			})
			step("transaction: update b, replace c, delete a", func() error {
				_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Update: &types.Update{TableName: aws.String("img"), Key: imgKey("b"), UpdateExpression: aws.String("SET m.x[0] = :t, l[2].m.n = :t"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":t": s("txn")}}},
					{Put: &types.Put{TableName: aws.String("img"), Item: imgItem("c", map[string]types.AttributeValue{"extra": s("e")})}},
					{Delete: &types.Delete{TableName: aws.String("img"), Key: imgKey("a")}}}})
				return err
			})
			step("put a again", put("a", map[string]types.AttributeValue{"again": n("2")}))
			step("update b, answer the old values", func() error {
				_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("img"), Key: imgKey("b"), UpdateExpression: aws.String("SET l[2].m.n = :x, bs2 = bs"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":x": n("99")}, ReturnValues: types.ReturnValueUpdatedOld})
				return err
			})
			step("replace b", put("b", map[string]types.AttributeValue{"l": list(s("new"))}))
			step("delete c", func() error {
				_, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("img"), Key: imgKey("c"), ReturnValues: types.ReturnValueAllOld})
				return err
			})

			var got []string
			for _, r := range firstPageRecords(t, sc, arn) {
				old, nw := "", ""
				if r.Dynamodb.OldImage != nil {
					old = savItem(r.Dynamodb.OldImage)
				}
				if r.Dynamodb.NewImage != nil {
					nw = savItem(r.Dynamodb.NewImage)
				}
				got = append(got, imgRecord(savItem(r.Dynamodb.Keys), old, nw))
			}
			n := 0
			for _, w := range want {
				n += len(w)
			}
			if len(got) != n {
				t.Fatalf("%d records, want %d:\n%s", len(got), n, strings.Join(got, "\n"))
			}
			for i, w := range want {
				g := slices.Clone(got[:len(w)])
				got = got[len(w):]
				sort.Strings(g)
				for j := range w {
					if g[j] != w[j] {
						t.Errorf("write %d's records:\n got %s\nwant %s", i+1, strings.Join(g, "\n     "), strings.Join(w, "\n     "))
						break
					}
				}
			}
		})
	}
}

func imgKey(k string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": s("p"), "sk": s(k)}
}

// imgItem is an item of nested lists, maps and sets, with extra set in it.
func imgItem(k string, extra map[string]types.AttributeValue) map[string]types.AttributeValue {
	it := imgKey(k)
	maps.Copy(it, map[string]types.AttributeValue{
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{n("1"), s("x"), &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"n": n("1")}}}}}},
		"m":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": &types.AttributeValueMemberL{Value: []types.AttributeValue{n("1"), n("2")}}, "y": s("s")}},
		"ss": &types.AttributeValueMemberSS{Value: []string{"p", "q"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"bs": &types.AttributeValueMemberBS{Value: [][]byte{{1, 2}, {3}}},
		"b":  &types.AttributeValueMemberB{Value: []byte{9, 8, 7}},
		"n":  n("5"),
		"t":  &types.AttributeValueMemberBOOL{Value: true},
		"z":  &types.AttributeValueMemberNULL{Value: true},
	})
	maps.Copy(it, extra)
	return it
}

func imgRecord(k, old, nw string) string { return fmt.Sprintf("%s old=%s new=%s", k, old, nw) }

// avItem and savItem write an item of the DynamoDB and the DynamoDB
// Streams API as one text (imgText).
func avItem(it map[string]types.AttributeValue) string {
	a, err := ddbclient.FromAttributeMap(it)
	if err != nil {
		return "?" + err.Error()
	}
	return imgText(a)
}

func savItem(it map[string]stypes.AttributeValue) string {
	a, err := streamsdk.Item(it)
	if err != nil {
		return "?" + err.Error()
	}
	return imgText(a)
}

// imgText writes an item as one text, attributes and set members sorted.
func imgText(it abi.Item) string {
	var parts []string
	for k, v := range it {
		parts = append(parts, k+":"+valText(v))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

func valText(v abi.Value) string {
	switch v.Kind {
	case abi.KindS:
		return fmt.Sprintf("S%q", v.Str)
	case abi.KindN:
		return "N" + v.Str
	case abi.KindB:
		return "B" + base64.StdEncoding.EncodeToString(v.Bytes)
	case abi.KindBOOL:
		return fmt.Sprint("BOOL", v.Bool)
	case abi.KindNULL:
		return "NULL"
	case abi.KindSS:
		return "SS" + sortedSet(v.Strs)
	case abi.KindNS:
		return "NS" + sortedSet(v.Strs)
	case abi.KindBS:
		var ss []string
		for _, b := range v.Blobs {
			ss = append(ss, base64.StdEncoding.EncodeToString(b))
		}
		return "BS" + sortedSet(ss)
	case abi.KindL:
		var ss []string
		for _, e := range v.List {
			ss = append(ss, valText(e))
		}
		return "[" + strings.Join(ss, ",") + "]"
	case abi.KindM:
		return "M" + imgText(v.Map)
	}
	return fmt.Sprintf("?%v", v.Kind)
}

func sortedSet(ss []string) string {
	ss = slices.Clone(ss)
	sort.Strings(ss)
	return "<" + strings.Join(ss, ",") + ">"
}
