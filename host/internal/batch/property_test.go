package batch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/batch"
	"github.com/dynafold/dynafold/host/internal/decode"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store/dynamo"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// TestP7_PropertyFeedWithFaultsAndCrashes runs random streams through
// processBatch with two projections on one feed, as a Lambda event source
// mapping would deliver them — shuffled, split into batches over concurrent
// lanes, redelivered, failed records retried from the lowest one — while
// ddblocal injects throttling, transaction conflicts (a put racing a
// transaction on the item) and server errors, and
// (in the crash variant) calls are abandoned mid-way. Every row ends equal
// to the sequential fold of its events; no event is applied twice; and
// without crashes every applicable event is in exactly one call's applied.
func TestP7_PropertyFeedWithFaultsAndCrashes(t *testing.T) {
	for _, crashes := range []bool{false, true} {
		t.Run(fmt.Sprint("crashes=", crashes), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, map[bool]uint64{false: 1, true: 2}[crashes]))
			f := newFixture(t)
			engines := []*apply.Engine{f.engine(t, "first"), f.engine(t, "second")}
			p := f.processor(t, decode.Options{}, nil, engines...)
			recs, want := randomFeed(t, f, rng)

			f.env.Server.SetFaults(ddblocal.FaultConfig{Seed: 5, Rates: map[string]map[string]float64{
				// High enough that some requests fail past the SDK's own retries.
				"PutItem":      {"ThrottlingException": 0.2, "InternalServerError": 0.2, "TransactionConflictException": 0.2},
				"BatchGetItem": {"ProvisionedThroughputExceededException": 0.4},
				"GetItem":      {"ThrottlingException": 0.3},
				"Query":        {"InternalServerError": 0.4},
			}})
			applied := deliverLikeLambda(t, p, recs, rng, crashes)
			f.env.Server.SetFaults(ddblocal.FaultConfig{})
			t.Logf("%d records, %d deliveries with failed records, %d crashed calls", len(recs), applied.retries, applied.crashed)
			require.Positive(t, applied.retries, "the injected faults must fail some rows")
			if crashes {
				require.Positive(t, applied.crashed)
			}

			for i, table := range f.tables {
				for row, w := range want {
					got, err := dynamo.New(f.env.Client).GetItem(ctx, table, testlogic.RowKey(row))
					require.NoError(t, err)
					if !w.created {
						assert.Nil(t, got, "%s row %s: skipped and rejected events alone create no row", engines[i].Projection().Name, row)
						continue
					}
					require.NotNil(t, got, "row %s", row)
					assert.Equal(t, w.log, got["log"].Str, "%s row %s", engines[i].Projection().Name, row)
					assert.Equal(t, fmt.Sprint(w.total), got["total"].Str, "%s row %s", engines[i].Projection().Name, row)
				}
			}
			for k, n := range applied.counts {
				assert.LessOrEqual(t, n, 1, "%s applied %d times", k, n)
			}
			if !crashes {
				for _, k := range applied.applicable {
					assert.Equal(t, 1, applied.counts[k], "%s must be in exactly one call's applied", k)
				}
			}
		})
	}
}

type rowFold struct {
	log     string
	total   int
	created bool
}

// randomFeed appends random streams and returns their records and each
// row's sequential fold.
func randomFeed(t *testing.T, f *fixture, rng *rand.Rand) ([]decode.Record, map[string]*rowFold) {
	want := map[string]*rowFold{}
	var recs []decode.Record
	for s := 0; s < 20; s++ {
		id := fmt.Sprintf("st%d", s)
		var nes []eventstore.NewEvent
		for i := 1 + rng.IntN(10); i > 0; i-- {
			tag := []string{"Add", "Add", "Add", "Same", "Skip", "Reject"}[rng.IntN(6)]
			data := abi.Item{"n": abi.N(fmt.Sprint(1 + rng.IntN(9)))}
			switch rng.IntN(8) {
			case 0:
				data["none"] = abi.Bool(true)
			case 1, 2:
				data["row"] = abi.S(id + "-b")
			}
			nes = append(nes, eventstore.NewEvent{Type: tag, Data: data})
		}
		evs, err := f.es.Append(ctx, f.stream, id, 0, nes...)
		require.NoError(t, err)
		for _, ev := range evs {
			f.seq++
			recs = append(recs, decode.Record{EventID: fmt.Sprint("e", f.seq), EventName: "INSERT",
				DynamoDB: decode.StreamRecord{NewImage: f.es.Layout().Item(ev), SequenceNumber: fmt.Sprintf("%021d", f.seq)}})
			if ev.Data["none"].Bool {
				continue
			}
			row := ev.StreamID
			if r, ok := ev.Data["row"]; ok {
				row = r.Str
			}
			w := want[row]
			if w == nil {
				w = &rowFold{}
				want[row] = w
			}
			if ev.Type == "Add" || ev.Type == "Same" {
				if ev.Type == "Add" {
					var n int
					fmt.Sscan(ev.Data["n"].Str, &n)
					w.total += n
				}
				w.log = strings.TrimPrefix(w.log+","+fmt.Sprint(ev.Version), ",")
				w.created = true
			}
		}
	}
	return recs, want
}

type appliedLog struct {
	mu         sync.Mutex
	counts     map[string]int
	applicable []string
	retries    int // deliveries that reported failed records
	crashed    int // calls abandoned mid-way
}

// deliverLikeLambda delivers the records shuffled and duplicated, in random
// batches over 4 lanes; a batch with failures is retried from its lowest
// failed record; a crashed call's response is lost and its batch delivered
// again.
func deliverLikeLambda(t *testing.T, p *batch.Processor, recs []decode.Record, rng *rand.Rand, crashes bool) *appliedLog {
	log := &appliedLog{counts: map[string]int{}}
	deliveries := append([]decode.Record(nil), recs...)
	for _, r := range recs {
		if rng.IntN(4) == 0 {
			deliveries = append(deliveries, r)
		}
		ev := r.DynamoDB.NewImage
		if tag := ev["eventType"].Str; (tag == "Add" || tag == "Same") && !ev["data"].Map["none"].Bool {
			for _, name := range []string{"first", "second"} {
				log.applicable = append(log.applicable, fmt.Sprintf("%s/%s/%s", name, ev["streamId"].Str, ev["version"].Str))
			}
		}
	}
	rng.Shuffle(len(deliveries), func(i, j int) { deliveries[i], deliveries[j] = deliveries[j], deliveries[i] })
	var batches [][]decode.Record
	for len(deliveries) > 0 {
		k := min(len(deliveries), 1+rng.IntN(12))
		batches = append(batches, deliveries[:k])
		deliveries = deliveries[k:]
	}
	seeds := make([]uint64, len(batches))
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for lane := 0; lane < 4; lane++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				deliverBatch(t, p, batches[i], rand.New(rand.NewPCG(seeds[i], 3)), crashes, log)
			}
		}()
	}
	for i := range batches {
		next <- i
	}
	close(next)
	wg.Wait()
	return log
}

func deliverBatch(t *testing.T, p *batch.Processor, b []decode.Record, rng *rand.Rand, crashes bool, log *appliedLog) {
	for tries := 0; len(b) > 0; tries++ {
		if tries == 60 {
			t.Errorf("a batch still fails after 60 deliveries")
			return
		}
		callCtx, cancel := context.WithCancel(ctx)
		crashed := crashes && rng.IntN(3) == 0
		if crashed {
			time.AfterFunc(time.Duration(rng.IntN(3000))*time.Microsecond, cancel)
		}
		res, err := p.Process(callCtx, b)
		cancel()
		if res != nil {
			log.record(res)
		}
		if crashed {
			log.mu.Lock()
			log.crashed++
			log.mu.Unlock()
			continue // the response is lost with the process: the source redelivers the batch
		}
		require.NoError(t, err)
		if len(res.Failed) == 0 {
			return
		}
		log.mu.Lock()
		log.retries++
		log.mu.Unlock()
		sort.Ints(res.Failed)
		b = b[res.Failed[0]:]
	}
}

func (l *appliedLog) record(res *batch.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, r := range res.Projections {
		for _, o := range r.Rows {
			if !o.Written {
				continue
			}
			for _, ev := range o.Applied() {
				l.counts[fmt.Sprintf("%s/%s/%d", name, ev.StreamID, ev.Version)]++
			}
		}
	}
}
