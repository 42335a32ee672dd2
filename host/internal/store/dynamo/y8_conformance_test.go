//go:build !noddblocal

package dynamo_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/dynamotest"
)

// conformanceEndpoint is the server the conformance cases run against:
// $DDB_CONFORMANCE_ENDPOINT when set (`ddblocal/conformance/dynalite.sh
// run-host` sets it to dynalite), else what dynamotest gives (in-process
// ddblocal, or $DYNAFOLD_TEST_DDB_ENDPOINT).
func conformanceEndpoint(t *testing.T) (endpoint, target string) {
	t.Helper()
	if ep := os.Getenv("DDB_CONFORMANCE_ENDPOINT"); ep != "" {
		u, err := url.Parse(ep)
		if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") {
			t.Fatalf("DDB_CONFORMANCE_ENDPOINT=%q: only a loopback endpoint is allowed in tests", ep)
		}
		target = os.Getenv("DDB_CONFORMANCE_TARGET")
		if target == "" {
			target = "endpoint"
		}
		return ep, target
	}
	return dynamotest.Endpoint(t), "ddblocal"
}

// conformanceResult is what a case's caller sees: its answer and the
// outcome of its error (types, codes, messages, requests sent).
type conformanceResult struct {
	Answer  any
	Outcome outcome
}

// conformanceCase is one call (or a few) of the hot path against a real
// server, with what DynamoDB answers when that is fixed (want; nil: the
// two clients must only agree).
type conformanceCase struct {
	name string
	run  func(ctx context.Context, db *dynamo.DB, table string) (any, error)
	want func(t *testing.T, answer any, o outcome)
	// transactions: the case needs TransactWriteItems (dynalite 4 has none).
	transactions bool
}

// allTypes is an item with every attribute type DynamoDB has, numbers at
// the ends of its range and precision, and strings that need escaping.
func allTypes(pk, sk string) abi.Item {
	return abi.Item{
		"pk": abi.S(pk), "sk": abi.S(sk),
		"s":     abi.S("quote \" backslash \\ newline \n tab \t control \u0001 unicode é 漢 😀 </script>"),
		"empty": abi.S(""),
		"n":     abi.N("12345678901234567890123456789012345678"),
		"small": abi.N("-0.0000000000000000000000000000000000001"),
		"big":   abi.N("9.9999999999999999999999999999999999999E+125"),
		"b":     abi.B([]byte{0, 1, 2, 250, 255}),
		"t":     abi.Bool(true), "f": abi.Bool(false),
		"null": abi.Null(),
		"ss":   abi.SS("a", "b\"", "漢"),
		"ns":   abi.NS("1", "-2.5", "100"),
		"bs":   abi.BS([]byte("x"), []byte{0}),
		"l":    abi.L(abi.S("x"), abi.N("1"), abi.L(), abi.M(map[string]abi.Value{})),
		"m": abi.M(map[string]abi.Value{
			"nested":          abi.M(map[string]abi.Value{"deeper": abi.L(abi.Bool(true), abi.Null(), abi.B([]byte("z")))}),
			"dots.and spaces": abi.S("v"),
		}),
	}
}

func conformanceCases() []conformanceCase {
	exists := &store.Cond{Expr: "attribute_exists(pk)"}
	fetch := func(ctx context.Context, db *dynamo.DB, table string, k abi.Item) (any, error) {
		return db.GetItem(ctx, table, k)
	}
	item := func(a any) abi.Item {
		it, _ := a.(abi.Item)
		return it
	}
	return []conformanceCase{
		{name: "PutItem/EveryTypeReadBackAsWritten", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			if err := db.PutItem(ctx, store.Put{Table: table, Item: allTypes("types", "1")}); err != nil {
				return nil, err
			}
			return fetch(ctx, db, table, key("types", "1"))
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			got := item(a)
			want := allTypes("types", "1")
			// DynamoDB answers a number in plain decimal notation.
			want["big"] = abi.N(strings.Repeat("9", 38) + strings.Repeat("0", 88))
			// DynamoDB keeps a set's members in an order of its own.
			for _, k := range []string{"ss", "ns", "bs"} {
				assert.ElementsMatch(t, want[k].Strs, got[k].Strs, k)
				assert.ElementsMatch(t, want[k].Blobs, got[k].Blobs, k)
				delete(want, k)
				delete(got, k)
			}
			assert.Equal(t, want, got)
		}},
		{name: "PutItem/ConditionOnNamesAndValues", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			err := db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": abi.S("have"), "sk": abi.S("1"), "v": abi.N("2")},
				Cond: &store.Cond{Expr: "#v = :one AND size(#p) > :z", Names: map[string]string{"#v": "v", "#p": "pk"},
					Values: map[string]abi.Value{":one": abi.N("1"), ":z": abi.N("0")}}})
			if err != nil {
				return nil, err
			}
			return fetch(ctx, db, table, key("have", "1"))
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			assert.Equal(t, abi.N("2"), item(a)["v"])
		}},
		{name: "PutItem/ConditionFails", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return nil, db.PutItem(ctx, store.Put{Table: table, Item: key("have", "1"), Cond: &store.Cond{Expr: "attribute_not_exists(pk)"}})
		}, want: func(t *testing.T, _ any, o outcome) { assert.True(t, o.Cond, "%+v", o) }},
		{name: "PutItem/MissingKeyAttribute", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return nil, db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": abi.S("only")}})
		}, want: func(t *testing.T, _ any, o outcome) {
			assert.Equal(t, "ValidationException", o.APICode, "%+v", o)
		}},
		{name: "PutItem/ItemOver400KB", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return nil, db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": abi.S("big"), "sk": abi.S("1"),
				"blob": abi.S(strings.Repeat("x", 400*1024))}})
		}, want: func(t *testing.T, _ any, o outcome) {
			assert.Equal(t, "ValidationException", o.APICode, "%+v", o)
		}},
		{name: "GetItem/Absent", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return fetch(ctx, db, table, key("none", "1"))
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			assert.Nil(t, item(a))
		}},
		{name: "GetItem/KeyOfTheWrongType", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return fetch(ctx, db, table, abi.Item{"pk": abi.N("1"), "sk": abi.S("1")})
		}, want: func(t *testing.T, _ any, o outcome) {
			assert.Equal(t, "ValidationException", o.APICode, "%+v", o)
		}},
		{name: "UpdateItem/SetAddRemoveAppend", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return db.UpdateItem(ctx, store.Update{Table: table, Key: key("have", "1"),
				Expr:   "SET #l = list_append(if_not_exists(#l, :empty), :more), s = :s ADD v :inc, tags :tag REMOVE gone",
				Names:  map[string]string{"#l": "list"},
				Values: map[string]abi.Value{":empty": abi.L(), ":more": abi.L(abi.S("a"), abi.N("2")), ":s": abi.S("é"), ":inc": abi.N("0.5"), ":tag": abi.SS("t")},
				Cond:   exists})
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			assert.Equal(t, abi.Item{"pk": abi.S("have"), "sk": abi.S("1"), "v": abi.N("1.5"), "s": abi.S("é"),
				"list": abi.L(abi.S("a"), abi.N("2")), "tags": abi.SS("t")}, item(a))
		}},
		{name: "UpdateItem/CreatesAnAbsentItem", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return db.UpdateItem(ctx, store.Update{Table: table, Key: key("fresh", "1"), Expr: "SET v = :v",
				Values: map[string]abi.Value{":v": abi.N("1")}})
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			assert.Equal(t, abi.Item{"pk": abi.S("fresh"), "sk": abi.S("1"), "v": abi.N("1")}, item(a))
		}},
		{name: "UpdateItem/UnusedValueIsRefused", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return db.UpdateItem(ctx, store.Update{Table: table, Key: key("have", "1"), Expr: "SET v = :v",
				Values: map[string]abi.Value{":v": abi.N("1"), ":unused": abi.N("2")}})
		}, want: func(t *testing.T, _ any, o outcome) {
			assert.Equal(t, "ValidationException", o.APICode, "%+v", o)
		}},
		{name: "DeleteItem/ConditionHoldsThenItIsGone", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			if err := db.DeleteItem(ctx, store.Delete{Table: table, Key: key("have", "1"),
				Cond: &store.Cond{Expr: "v = :v", Values: map[string]abi.Value{":v": abi.N("1")}}}); err != nil {
				return nil, err
			}
			return fetch(ctx, db, table, key("have", "1"))
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			assert.Nil(t, item(a))
		}},
		{name: "DeleteItem/ConditionFails", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return nil, db.DeleteItem(ctx, store.Delete{Table: table, Key: key("have", "1"),
				Cond: &store.Cond{Expr: "v > :v", Values: map[string]abi.Value{":v": abi.N("1")}}})
		}, want: func(t *testing.T, _ any, o outcome) { assert.True(t, o.Cond, "%+v", o) }},
		{name: "Query/RangeFilterPagesBackwards", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			for i := range 12 {
				it := abi.Item{"pk": abi.S("q"), "sk": abi.S(fmt.Sprintf("%02d", i)), "odd": abi.Bool(i%2 == 1)}
				if err := db.PutItem(ctx, store.Put{Table: table, Item: it}); err != nil {
					return nil, err
				}
			}
			q := store.Query{Table: table, KeyCond: "pk = :p AND sk BETWEEN :a AND :b", Filter: "#o = :t",
				Names: map[string]string{"#o": "odd"}, Limit: 4, Backwards: true,
				Values: map[string]abi.Value{":p": abi.S("q"), ":a": abi.S("02"), ":b": abi.S("10"), ":t": abi.Bool(true)}}
			var pages []store.Page
			for {
				p, err := db.Query(ctx, q)
				if err != nil {
					return pages, err
				}
				pages = append(pages, p)
				if p.LastKey == nil || len(pages) > 10 {
					return pages, nil
				}
				q.StartKey = p.LastKey
			}
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			var sks []string
			for _, p := range a.([]store.Page) {
				for _, it := range p.Items {
					sks = append(sks, it["sk"].Str)
				}
			}
			assert.Equal(t, []string{"09", "07", "05", "03"}, sks)
		}},
		{name: "Query/BeginsWith", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			for _, sk := range []string{"a#1", "a#2", "b#1"} {
				if err := db.PutItem(ctx, store.Put{Table: table, Item: key("bw", sk)}); err != nil {
					return nil, err
				}
			}
			return db.Query(ctx, store.Query{Table: table, KeyCond: "pk = :p AND begins_with(sk, :a)",
				Values: map[string]abi.Value{":p": abi.S("bw"), ":a": abi.S("a#")}})
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			assert.Equal(t, []abi.Item{key("bw", "a#1"), key("bw", "a#2")}, a.(store.Page).Items)
		}},
		{name: "Query/KeyConditionOnANonKeyAttribute", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return db.Query(ctx, store.Query{Table: table, KeyCond: "v = :v", Values: map[string]abi.Value{":v": abi.N("1")}})
		}, want: func(t *testing.T, _ any, o outcome) {
			assert.Equal(t, "ValidationException", o.APICode, "%+v", o)
		}},
		{name: "BatchGetItem/MoreThanOneRequestDuplicatesAndAbsentInOrder", run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			var keys []abi.Item
			for i := range 130 {
				k := key("bg", fmt.Sprint(i))
				if i%3 != 0 {
					if err := db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": k["pk"], "sk": k["sk"], "i": abi.N(fmt.Sprint(i))}}); err != nil {
						return nil, err
					}
				}
				keys = append(keys, k)
			}
			keys = append(keys, key("bg", "1"), key("bg", "3"))
			return db.BatchGetItem(ctx, table, keys)
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			got := a.([]abi.Item)
			require.Len(t, got, 132)
			for i, it := range got[:130] {
				if i%3 == 0 {
					assert.Nil(t, it, "key %d", i)
				} else {
					assert.Equal(t, abi.N(fmt.Sprint(i)), it["i"], "key %d", i)
				}
			}
			assert.Equal(t, got[1], got[130])
			assert.Nil(t, got[131])
			assert.Equal(t, int64(2), o.Requests["BatchGetItem"], "131 keys, 130 distinct: two requests")
		}},
		{name: "TransactWriteItems/EveryKindCommits", transactions: true, run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			err := db.TransactWriteItems(ctx, []store.Write{
				{Put: &store.Put{Table: table, Item: allTypes("tx", "1"), Cond: &store.Cond{Expr: "attribute_not_exists(pk)"}}},
				{Update: &store.Update{Table: table, Key: key("have", "1"), Expr: "ADD v :one", Values: map[string]abi.Value{":one": abi.N("1")}, Cond: exists}},
				{Delete: &store.Delete{Table: table, Key: key("tx", "gone")}},
				{Check: &store.Check{Table: table, Key: key("none", "1"), Cond: store.Cond{Expr: "attribute_not_exists(pk)"}}},
			})
			if err != nil {
				return nil, err
			}
			return db.BatchGetItem(ctx, table, []abi.Item{key("tx", "1"), key("have", "1")})
		}, want: func(t *testing.T, a any, o outcome) {
			require.False(t, o.Err, "%+v", o)
			got := a.([]abi.Item)
			assert.Equal(t, abi.N("2"), got[1]["v"])
			assert.Equal(t, allTypes("tx", "1")["m"], got[0]["m"])
		}},
		{name: "TransactWriteItems/TwoWritesOnOneItemRefused", transactions: true, run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return nil, db.TransactWriteItems(ctx, []store.Write{
				{Put: &store.Put{Table: table, Item: key("have", "1")}},
				{Delete: &store.Delete{Table: table, Key: key("have", "1")}},
			})
		}, want: func(t *testing.T, _ any, o outcome) {
			assert.Equal(t, "ValidationException", o.APICode, "%+v", o)
		}},
		{name: "TransactWriteItems/CanceledReasonsInOrder", transactions: true, run: func(ctx context.Context, db *dynamo.DB, table string) (any, error) {
			return nil, db.TransactWriteItems(ctx, []store.Write{
				{Check: &store.Check{Table: table, Key: key("have", "1"), Cond: store.Cond{Expr: "attribute_exists(pk)"}}},
				{Update: &store.Update{Table: table, Key: key("none", "1"), Expr: "SET v = :v", Values: map[string]abi.Value{":v": abi.N("1")}, Cond: exists}},
			})
		}, want: func(t *testing.T, _ any, o outcome) {
			assert.Equal(t, []string{"None", "ConditionalCheckFailed"}, o.Reasons, "%+v", o)
		}},
	}
}

// TestY8_ConformanceCasesAgreeThroughBothClients runs the hot calls'
// everyday cases (every attribute type, conditions, updates, pages,
// batches of more than one request, transactions, DynamoDB's validation
// errors) against a real server through the host's wire path and through
// the SDK's client: both see the same answers and errors, and where
// DynamoDB's answer is fixed, it is that one. `make test` runs it against
// ddblocal and, through dynalite.sh run-host, against dynalite.
func TestY8_ConformanceCasesAgreeThroughBothClients(t *testing.T) {
	ep, target := conformanceEndpoint(t)
	client := dynamotest.ClientAt(t, ep)
	wire, sdk := dynamo.New(client), dynamo.NewSDK(client)
	require.True(t, wire.Wire(), "the host's client takes the wire path")
	ctx := context.Background()
	for _, c := range conformanceCases() {
		t.Run(c.name, func(t *testing.T) {
			if c.transactions && target == "dynalite" {
				t.Skip("dynalite 4.0.0 has no transactions (UnknownOperationException)")
			}
			var got [2]conformanceResult
			for i, db := range []*dynamo.DB{wire, sdk} {
				table := dynamotest.CreateTable(t, client, "conf")
				require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: abi.Item{"pk": abi.S("have"), "sk": abi.S("1"), "v": abi.N("1"), "gone": abi.S("x")}}))
				db.ResetCounts()
				answer, err := c.run(ctx, db, table)
				got[i] = conformanceResult{Answer: answer, Outcome: outcomeOf(err, db, nil)}
			}
			assert.Equal(t, got[1], got[0], "wire path (first) against the SDK's client (second), on %s", target)
			if c.want != nil {
				c.want(t, got[0].Answer, got[0].Outcome)
			}
		})
	}
}
