package extism_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism"
	"github.com/dynafold/dynafold/internal/ordercases"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// TestW3_ExtismAndRawAgreeOnNumbers folds random prices through the Go
// plugin and the AssemblyScript plugin: the totals (exact decimal sums in
// plain notation), the BadEvent decisions for numbers DynamoDB does not store
// and the BadTotal decisions for sums longer than 38 digits agree byte for
// byte.
func TestW3_ExtismAndRawAgreeOnNumbers(t *testing.T) {
	ctx := context.Background()
	raw, err := plugin.Load(ctx, orderSummaryRaw(t), plugin.Config{CacheDir: cacheDir})
	require.NoError(t, err)
	defer raw.Close(ctx)
	as := load(t, orderSummaryAS(t), extism.Config{})
	r := rand.New(rand.NewPCG(7, 11))
	n := 1500
	if testing.Short() {
		n = 200
	}
	if v, err := strconv.Atoi(os.Getenv("DYNAFOLD_NUMBERS_N")); err == nil {
		n = v // a longer soak: DYNAFOLD_NUMBERS_N=100000
	}
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		req := &abi.EvolveRequest{Key: ordersummary.RowKey("o-1"), StreamID: "o-1"}
		var prices []string
		for v := 1; v <= 1+r.IntN(3); v++ {
			p := ordercases.RandomNumber(r)
			prices = append(prices, p)
			req.Events = append(req.Events, ordercases.Added(uint64(v), p))
		}
		in := abi.AppendEvolveRequest(nil, req)
		rb, err := raw.Call(ctx, abi.CapEvolve, in)
		require.NoError(t, err)
		ab, err := as.Call(ctx, abi.CapEvolve, in)
		require.NoError(t, err)
		if rr, err := abi.DecodeEvolveResponse(rb); err == nil {
			for _, d := range rr.Decisions {
				seen[d.Outcome.String()+tagOf(d.Error)]++
			}
		}
		if !bytes.Equal(rb, ab) {
			rr, _ := abi.DecodeEvolveResponse(rb)
			ar, _ := abi.DecodeEvolveResponse(ab)
			t.Fatalf("prices %q:\nraw    total %v decisions %v\nextism total %v decisions %v",
				prices, rr.State["total"], rr.Decisions, ar.State["total"], ar.Decisions)
		}
	} // The random prices reach every path: sums stored, prices refused,
	// sums too long to store.
	t.Logf("decisions: %v", seen)
	for _, k := range []string{"applied", "failed/BadEvent", "failed/BadTotal"} {
		require.Positive(t, seen[k], "no %s decision among %d runs", k, n)
	}
}

func tagOf(e *abi.Error) string {
	if e == nil {
		return ""
	}
	return "/" + e.Tag
}
