package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/outbox"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// Concurrent drainers of the same rows, with deliveries that fail or
// outlast their claims (so other drainers take the effects over): every
// effect is delivered at least once, and per row the first deliveries come
// in commit order.
func TestO2_ConcurrentDrainersDeliverEveryEffectAtLeastOnceInOrder(t *testing.T) {
	f := newFixture(t, 2)
	e := f.engine(t, nil)
	rows := []string{"x", "y", "z"}
	want := map[string][]string{}
	for w := 0; w < 5; w++ {
		for _, r := range rows {
			f.commit(t, e, r, 1, 1)
			for v := 2*w + 1; v <= 2*w+2; v++ {
				want[r] = append(want[r], fmt.Sprintf("%s/v%d.0", r, v), fmt.Sprintf("%s/v%d.1", r, v))
			}
		}
	}
	var mu sync.Mutex
	first := map[string][]string{}
	seen := map[string]bool{}
	target := deliver.Func(func(_ context.Context, ef deliver.Effect) error {
		time.Sleep(time.Duration(rand.IntN(4)) * time.Millisecond) // sometimes longer than the claim
		if rand.IntN(5) == 0 {
			return errors.New("flaky consumer")
		}
		mu.Lock()
		defer mu.Unlock()
		if n := name(ef); !seen[n] {
			seen[n] = true
			first[ef.StreamID] = append(first[ef.StreamID], n)
		}
		return nil
	})
	d := outbox.Drainer{DB: f.db, Layout: f.drain.Layout, ClaimFor: 2 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				left := 0
				for _, r := range rows {
					if _, err := d.Drain(ctx, testlogic.RowKey(r), target); err != nil && ctx.Err() == nil {
						t.Error(err)
						return
					}
					left += f.pending(t, r)
				}
				if left == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, ctx.Err(), "the drainers did not empty the outboxes in time")
	for _, r := range rows {
		assert.Equal(t, want[r], first[r], "row %s: first deliveries in commit order", r)
	}
}
