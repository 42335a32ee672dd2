package conformance

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// benchServers returns the servers BenchmarkDDB measures: ddblocal always
// (the in-process target, or a private one), dynalite when its endpoint is
// known (DDB_DYNALITE_ENDPOINT, or DDB_CONFORMANCE_ENDPOINT with
// DDB_CONFORMANCE_TARGET=dynalite, as dynalite.sh bench sets).
func benchServers(b *testing.B) map[string]string {
	b.Helper()
	out := map[string]string{}
	if tgt.name == "ddblocal" {
		out["ddblocal"] = tgt.endpoint
	} else if startLocal != nil {
		ep, _, stop, err := startLocal(context.Background())
		if err != nil {
			b.Fatalf("start ddblocal: %v", err)
		}
		b.Cleanup(func() { _ = stop() })
		out["ddblocal"] = ep
	}
	if ep := os.Getenv("DDB_DYNALITE_ENDPOINT"); ep != "" {
		out["dynalite"] = ep
	} else if tgt.name == "dynalite" {
		out["dynalite"] = tgt.endpoint
	}
	return out
}

func benchTable(b *testing.B, c *dynamodb.Client, name string) {
	b.Helper()
	ks, ad := keySchema(types.ScalarAttributeTypeN)
	c2 := context.Background()
	if _, err := c.CreateTable(c2, &dynamodb.CreateTableInput{TableName: aws.String(name), KeySchema: ks, AttributeDefinitions: ad,
		BillingMode: types.BillingModePayPerRequest}); err != nil {
		b.Fatalf("CreateTable: %v", err)
	}
	b.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	for i := 0; i < 500; i++ {
		d, err := c.DescribeTable(c2, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			b.Fatalf("DescribeTable: %v", err)
		}
		if d.Table.TableStatus == types.TableStatusActive {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatalf("table %s never became ACTIVE", name)
}

func benchItem(p string, i int) Item {
	return Item{"pk": s(p), "sk": n(fmt.Sprint(i)), "name": s("item-name-with-some-length"), "count": n(fmt.Sprint(i * 7)),
		"tags": ss("a", "b", "c"), "doc": m(Item{"x": n("1"), "y": s("why"), "z": l(s("p"), s("q"))})}
}

// BenchmarkDDB measures single-client round trips through aws-sdk-go-v2:
// BenchmarkDDB/<op>/<server>.
func BenchmarkDDB(b *testing.B) {
	servers := benchServers(b)
	order := []string{"ddblocal", "dynalite"}
	ops := []struct {
		name string
		run  func(b *testing.B, c *dynamodb.Client, table string)
	}{
		{"PutItem", func(b *testing.B, c *dynamodb.Client, table string) {
			for i := 0; b.Loop(); i++ {
				if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: benchItem(fmt.Sprintf("p%d", i%100), i)}); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"GetItem", func(b *testing.B, c *dynamodb.Client, table string) {
			for i := 0; i < 200; i++ {
				if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: benchItem("g", i)}); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; b.Loop(); i++ {
				out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: Item{"pk": s("g"), "sk": n(fmt.Sprint(i % 200))}})
				if err != nil || out.Item == nil {
					b.Fatalf("GetItem: %v (item %v)", err, out)
				}
			}
		}},
		{"Query", func(b *testing.B, c *dynamodb.Client, table string) {
			for i := 0; i < 200; i++ {
				if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: benchItem("q", i)}); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; b.Loop(); i++ {
				out, err := c.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("pk = :p AND sk >= :s"),
					ExpressionAttributeValues: Item{":p": s("q"), ":s": n(fmt.Sprint(i % 180))}, Limit: aws.Int32(20)})
				if err != nil || out.Count != 20 {
					b.Fatalf("Query: %v (count %v)", err, out)
				}
			}
		}},
		{"TransactWriteItems", func(b *testing.B, c *dynamodb.Client, table string) {
			for i := 0; b.Loop(); i++ {
				items := make([]types.TransactWriteItem, 4)
				for j := range items {
					items[j] = types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: benchItem(fmt.Sprintf("t%d", i%100), i*4+j)}}
				}
				if _, err := c.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
					b.Fatal(err)
				}
			}
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			for _, server := range order {
				ep, ok := servers[server]
				if !ok {
					continue
				}
				b.Run(server, func(b *testing.B) {
					if server == "dynalite" && dynaliteGaps[op.name] {
						b.Skipf("dynalite 4.0.0 does not implement %s", op.name)
					}
					c := ddbAt(ep)
					table := fmt.Sprintf("bench_%s_%d_%d", op.name, os.Getpid(), tableSeq.Add(1))
					benchTable(b, c, table)
					op.run(b, c, table)
				})
			}
		})
	}
}
