package outbox_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
)

// pendingHashKeys scans the table for outbox items and counts them by
// their sparse index hash key.
func (f *fixture) pendingHashKeys(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	sc := store.Scan{Table: f.table, Filter: "attribute_exists(#p)", Names: map[string]string{"#p": apply.OutboxIndexPK}}
	for {
		page, err := f.db.Scan(ctx, sc)
		require.NoError(t, err)
		for _, it := range page.Items {
			out[it[apply.OutboxIndexPK].Str]++
		}
		if page.LastKey == nil {
			return out
		}
		sc.StartKey = page.LastKey
	}
}

// The sparse index's hash key spreads a projection's pending effects over
// buckets: 40 rows' effects land under many hash keys, not all under the
// projection's name, each row's effects under one; a sweep finds them all.
func TestO5_PendingEffectsAreSpreadOverIndexBuckets(t *testing.T) {
	f := newFixture(t, 2)
	e := f.engine(t, nil)
	for i := range 40 {
		f.commit(t, e, fmt.Sprint("r", i), 1)
	}

	hashes := f.pendingHashKeys(t)

	assert.Greater(t, len(hashes), 8, "40 rows over the default 16 buckets: %v", hashes)
	total := 0
	for h, n := range hashes {
		assert.True(t, strings.HasPrefix(h, "ledger#"), "hash key %q names the projection and a bucket", h)
		assert.Zero(t, n%2, "a row's 2 effects share a bucket (%q holds %d)", h, n)
		total += n
	}
	assert.Equal(t, 80, total)
	reps, err := f.drain.DrainPending(ctx, &recorder{})
	require.NoError(t, err)
	assert.Len(t, reps, 40, "the sweep reads every bucket")
	assert.Empty(t, f.pendingHashKeys(t))
}

// barrierDB holds every index query until need of them are in flight at
// once: a sweep that queries its buckets one after another never gets
// there, and fails when the deadline passes.
type barrierDB struct {
	store.DB
	need int
	mu   sync.Mutex
	in   int
	full chan struct{}
}

func (b *barrierDB) Query(ctx context.Context, q store.Query) (store.Page, error) {
	if q.Index != "" {
		b.mu.Lock()
		b.in++
		if b.in == b.need {
			close(b.full)
		}
		in := b.in
		b.mu.Unlock()
		select {
		case <-b.full:
		case <-ctx.Done():
			return store.Page{}, ctx.Err()
		case <-time.After(20 * time.Second):
			return store.Page{}, fmt.Errorf("only %d index queries were ever in flight at once, want %d", in, b.need)
		}
	}
	return b.DB.Query(ctx, q)
}

// drainPending sweeps every bucket in parallel: all 16 buckets and the key
// of effects committed before the index was bucketed are queried at once.
func TestO5_DrainPendingSweepsEveryBucketInParallel(t *testing.T) {
	f := newFixture(t, 1)
	e := f.engine(t, nil)
	for i := range 5 {
		f.commit(t, e, fmt.Sprint("r", i), 1)
	}
	d := *f.drain
	d.DB = &barrierDB{DB: f.db, need: apply.DefaultIndexBuckets + 1, full: make(chan struct{})}

	reps, err := d.DrainPending(ctx, &recorder{})

	require.NoError(t, err)
	assert.Len(t, reps, 5)
}

// Effects committed before the index was bucketed sit under the
// projection's name alone: a sweep still finds and delivers them, in
// order, beside the bucketed ones.
func TestO5_EffectsUnderTheOldSingleIndexKeyAreStillSwept(t *testing.T) {
	f := newFixture(t, 2)
	e := f.engine(t, nil)
	f.commit(t, e, "old", 1, 2)
	f.commit(t, e, "new", 3)
	// Move "old"'s items to the single hash key an older host wrote.
	sc := store.Scan{Table: f.table, Filter: "attribute_exists(#p)", Names: map[string]string{"#p": apply.OutboxIndexPK}}
	page, err := f.db.Scan(ctx, sc)
	require.NoError(t, err)
	moved := 0
	for _, it := range page.Items {
		if it[apply.OutboxAttrStreamID].Str != "old" {
			continue
		}
		_, err := f.db.UpdateItem(ctx, store.Update{Table: f.table, Key: abi.Item{"pk": it["pk"], "sk": it["sk"]},
			Expr: "SET #p = :p", Names: map[string]string{"#p": apply.OutboxIndexPK}, Values: map[string]abi.Value{":p": abi.S("ledger")}})
		require.NoError(t, err)
		moved++
	}
	require.Equal(t, 4, moved)
	r := &recorder{}

	reps, err := f.drain.DrainPending(ctx, r)

	require.NoError(t, err)
	assert.Len(t, reps, 2)
	got := r.delivered()
	assert.ElementsMatch(t, []string{"old/v1.0", "old/v1.1", "old/v2.0", "old/v2.1", "new/v1.0", "new/v1.1"}, got)
	assert.Empty(t, f.pendingHashKeys(t))
}
