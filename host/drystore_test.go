package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testenv"
)

// TestY5_DryStoreWritesNothing: a dry run's puts are read back from memory
// and never reach the table; a hidden table reads as empty; every other
// write is refused.
func TestY5_DryStoreWritesNothing(t *testing.T) {
	ctx := context.Background()
	env := testenv.Start(t)
	table := env.Table(t, "rows", false)
	key := func(id string) abi.Item { return abi.Item{"pk": abi.S(id), "sk": abi.S("x")} }
	stored := abi.Item{"pk": abi.S("a"), "sk": abi.S("x"), "n": abi.N("1")}
	env.Put(t, table, stored)
	db := dynamo.New(env.Client)

	dry := host.NewDryStore(db, []string{"pk", "sk"}, "")
	if it, err := dry.GetItem(ctx, table, key("a")); err != nil || !it["n"].Equal(abi.N("1")) {
		t.Fatalf("read through: %v %v", it, err)
	}
	put := abi.Item{"pk": abi.S("b"), "sk": abi.S("x"), "n": abi.N("2")}
	if err := dry.PutItem(ctx, store.Put{Table: table, Item: put}); err != nil {
		t.Fatal(err)
	}
	got, err := dry.BatchGetItem(ctx, table, []abi.Item{key("a"), key("b"), key("c")})
	if err != nil || !got[0]["n"].Equal(abi.N("1")) || !got[1]["n"].Equal(abi.N("2")) || got[2] != nil {
		t.Fatalf("batch read: %v %v", got, err)
	}
	if it := env.Get(t, table, key("b")); it != nil {
		t.Fatalf("the dry put reached the table: %v", it)
	}
	if _, err := dry.UpdateItem(ctx, store.Update{Table: table, Key: key("a")}); !errors.Is(err, host.ErrDryRun) {
		t.Errorf("UpdateItem: %v", err)
	}
	if err := dry.DeleteItem(ctx, store.Delete{Table: table, Key: key("a")}); !errors.Is(err, host.ErrDryRun) {
		t.Errorf("DeleteItem: %v", err)
	}
	if err := dry.TransactWriteItems(ctx, nil); !errors.Is(err, host.ErrDryRun) {
		t.Errorf("TransactWriteItems: %v", err)
	}

	hidden := host.NewDryStore(db, []string{"pk", "sk"}, table)
	if it, err := hidden.GetItem(ctx, table, key("a")); err != nil || it != nil {
		t.Fatalf("a hidden table's item: %v %v", it, err)
	}
	if got, err := hidden.BatchGetItem(ctx, table, []abi.Item{key("a")}); err != nil || got[0] != nil {
		t.Fatalf("a hidden table's batch read: %v %v", got, err)
	}
}
