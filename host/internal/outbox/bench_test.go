package outbox_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/deliver"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// BenchmarkOutbox measures the outbox against ddblocal through the real SDK:
//
//   - write/effects=K: the latency of one row write whose one applied event
//     carries K effects (K = 0 is the single PutItem; otherwise one
//     TransactWriteItems of the row and K items);
//   - commit and commit+deliver: effects/s committed (10 per write), and
//     committed then delivered (drained to a Go callback right after each
//     write: query, claim, deliver, delete per effect);
//   - drain-pending/rows=R: one sweep of the sparse index that finds R rows
//     with one pending effect each and delivers them (the effects are
//     committed before each sweep, off the clock);
//   - pending/rows=R: listing the R rows with pending effects through the
//     sparse index alone (what a sweep reads before it drains).
func BenchmarkOutbox(b *testing.B) {
	for _, k := range []int{0, 1, 10, 99} {
		b.Run(fmt.Sprintf("write/effects=%d", k), func(b *testing.B) {
			f := newFixture(b, k)
			e := f.benchEngine(b, nil)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.apply(b, e, "w", i)
			}
		})
	}
	b.Run("commit/effects=10", func(b *testing.B) {
		f := newFixture(b, 10)
		e := f.benchEngine(b, nil)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f.apply(b, e, "c", i)
		}
		b.ReportMetric(float64(10*b.N)/b.Elapsed().Seconds(), "effects/s")
	})
	for _, rows := range []int{200, 1000} {
		b.Run(fmt.Sprintf("drain-pending/rows=%d", rows), func(b *testing.B) {
			f := newFixture(b, 1)
			e := f.benchEngine(b, nil)
			target := deliver.Func(func(context.Context, deliver.Effect) error { return nil })
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				in := make([]apply.Input, rows)
				for r := range in {
					in[r] = apply.Input{Pos: r, Event: abi.Event{Stream: testlogic.Stream, StreamID: fmt.Sprint("p", r), Version: uint64(i + 1), Type: "Add", Data: abi.Item{"n": abi.N("1")}}}
				}
				for _, o := range e.ApplyBatch(ctx, in).Rows {
					if o.Err != nil || o.Enqueued != 1 {
						b.Fatalf("commit: %v, %d effects", o.Err, o.Enqueued)
					}
				}
				b.StartTimer()
				reps, err := f.drain.DrainPending(ctx, target)
				if err != nil {
					b.Fatal(err)
				}
				delivered := 0
				for _, rep := range reps {
					delivered += len(rep.Delivered)
				}
				if delivered != rows {
					b.Fatalf("sweep %d delivered %d effects, want %d", i, delivered, rows)
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "effects/s")
		})
	}
	b.Run("pending/rows=1000", func(b *testing.B) {
		f := newFixture(b, 1)
		e := f.benchEngine(b, nil)
		in := make([]apply.Input, 1000)
		for r := range in {
			in[r] = apply.Input{Pos: r, Event: abi.Event{Stream: testlogic.Stream, StreamID: fmt.Sprint("p", r), Version: 1, Type: "Add", Data: abi.Item{"n": abi.N("1")}}}
		}
		for _, o := range e.ApplyBatch(ctx, in).Rows {
			if o.Err != nil {
				b.Fatal(o.Err)
			}
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			rows, err := f.drain.Pending(ctx)
			if err != nil || len(rows) != 1000 {
				b.Fatalf("pending: %d rows, %v", len(rows), err)
			}
		}
	})
	b.Run("commit+deliver/effects=10", func(b *testing.B) {
		f := newFixture(b, 10)
		target := deliver.Func(func(context.Context, deliver.Effect) error { return nil })
		delivered := 0
		e := f.benchEngine(b, func(ctx context.Context, key abi.Item) (int, int) {
			rep, err := f.drain.Drain(ctx, key, target)
			if err != nil {
				b.Fatal(err)
			}
			delivered += len(rep.Delivered)
			return len(rep.Delivered), 0
		})
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f.apply(b, e, "d", i)
		}
		b.ReportMetric(float64(delivered)/b.Elapsed().Seconds(), "effects/s")
		if delivered != 10*b.N {
			b.Fatalf("delivered %d effects, want %d", delivered, 10*b.N)
		}
	})
}

func (f *fixture) benchEngine(b *testing.B, drain func(ctx context.Context, key abi.Item) (int, int)) *apply.Engine {
	b.Helper()
	e, err := apply.New(apply.Projection{
		Name: "ledger", Table: f.table, KeyAttrs: []string{"pk", "sk"}, Logic: f.fx,
		Sources:  []apply.Source{{Stream: testlogic.Stream}},
		Revision: &apply.Revision{Field: "rev"}, Checkpoint: apply.Checkpoint{Map: "checkpoints"},
		Outbox: &apply.Outbox{EntityType: "LedgerRow", Index: "outbox", Drain: drain},
	}, f.db, f)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// apply folds version i+1 of stream id into its row (no event store
// read: the batch brings the next version).
func (f *fixture) apply(b *testing.B, e *apply.Engine, id string, i int) {
	ev := abi.Event{Stream: testlogic.Stream, StreamID: id, Version: uint64(i + 1), Type: "Add", Data: abi.Item{"n": abi.N("1")}}
	o := e.ApplyBatch(ctx, []apply.Input{{Event: ev, Pos: 0}}).Rows[0]
	if o.Err != nil {
		b.Fatal(o.Err)
	}
}
