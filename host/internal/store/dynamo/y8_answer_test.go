package dynamo_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// TestY8_ReadItemsSurviveTheNextAnswers: the items a Query, a
// BatchGetItem and a GetItem return on the wire path are theirs: reading
// other answers afterwards (the same pooled buffers reused) and
// appending to their lists changes nothing in them.
func TestY8_ReadItemsSurviveTheNextAnswers(t *testing.T) {
	db, table := setup(t)
	require.True(t, db.Wire())
	ctx := context.Background()
	row := func(pk string, i int, word string) abi.Item {
		return abi.Item{"pk": abi.S(pk), "sk": abi.S(fmt.Sprintf("%03d", i)), "word": abi.S(word + "-" + pk),
			"l": abi.L(abi.S(word), abi.N(fmt.Sprint(i))), "ss": abi.SS(word, "z")}
	}
	for i := range 12 {
		require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: row("a", i, "first")}))
	}
	page, err := db.Query(ctx, store.Query{Table: table, KeyCond: "pk = :p", Values: map[string]abi.Value{":p": abi.S("a")}})
	require.NoError(t, err)
	require.Len(t, page.Items, 12)
	keys := make([]abi.Item, 12)
	for i := range keys {
		keys[i] = abi.Item{"pk": abi.S("a"), "sk": abi.S(fmt.Sprintf("%03d", i))}
	}
	batch, err := db.BatchGetItem(ctx, table, keys)
	require.NoError(t, err)
	one, err := db.GetItem(ctx, table, keys[0])
	require.NoError(t, err)
	snapshot := func() string {
		var all []abi.Value
		for _, it := range append(append(append([]abi.Item{}, page.Items...), batch...), one) {
			all = append(all, abi.M(it))
		}
		b, err := ddbjson.ItemToJSON(abi.Item{"all": abi.L(all...)})
		require.NoError(t, err)
		return string(b)
	}
	want := snapshot()
	require.Contains(t, want, "first-a")

	// other answers, of the same sizes, through the same buffers
	for i := range 12 {
		require.NoError(t, db.PutItem(ctx, store.Put{Table: table, Item: row("a", i, "later")}))
	}
	for range 3 {
		again, err := db.Query(ctx, store.Query{Table: table, KeyCond: "pk = :p", Values: map[string]abi.Value{":p": abi.S("a")}})
		require.NoError(t, err)
		require.Equal(t, "later-a", again.Items[0]["word"].Str)
		_, err = db.BatchGetItem(ctx, table, keys)
		require.NoError(t, err)
	}
	for _, it := range page.Items {
		l := it["l"].List
		_ = append(l, abi.S("appended"))
		_ = append(it["ss"].Strs, "appended")
	}
	require.Equal(t, want, snapshot())
}
