package host

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/eventstore"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/keys"
)

// keyText is a row key's one readable form.
func keyText(k abi.Item) string { return keys.String(k) }

// segmentPlan is which segments of a parallel scan to read: all of them,
// or a random fraction for a sample.
type segmentPlan struct {
	total int
	read  []int
}

// planSegments returns the segments to read: every one of segments, or,
// for a sample fraction below 1, that fraction (at least one) of a finer
// split, chosen at random.
func planSegments(segments int, sample float64, rng *rand.Rand) segmentPlan {
	if sample <= 0 || sample >= 1 {
		p := segmentPlan{total: segments}
		for i := range segments {
			p.read = append(p.read, i)
		}
		return p
	}
	total := int(math.Min(1_000_000, math.Max(float64(segments), math.Ceil(float64(segments)/sample))))
	k := max(1, int(math.Round(sample*float64(total))))
	chosen := map[int]bool{}
	p := segmentPlan{total: total}
	for len(p.read) < k {
		s := rng.IntN(total)
		if !chosen[s] {
			chosen[s] = true
			p.read = append(p.read, s)
		}
	}
	sort.Ints(p.read)
	return p
}

// scanSegments scans the planned segments of sc's table, at most workers
// at once, strongly consistent, calling f with each page's items as soon
// as it is read (from the scans' goroutines, one at a time). It returns
// the first error.
func (h *Host) scanSegments(ctx context.Context, sc store.Scan, plan segmentPlan, workers int, f func(items []abi.Item)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		next  = make(chan int)
	)
	for range min(workers, len(plan.read)) {
		wg.Go(func() {
			for seg := range next {
				s := sc
				s.Consistent, s.Segment, s.TotalSegments = true, seg, plan.total
				for {
					page, err := h.db.Scan(ctx, s)
					if err != nil {
						mu.Lock()
						if first == nil {
							first = fmt.Errorf("scanning %s (segment %d of %d): %w", sc.Table, seg, plan.total, err)
							cancel()
						}
						mu.Unlock()
						break
					}
					mu.Lock()
					f(page.Items)
					mu.Unlock()
					if page.LastKey == nil {
						break
					}
					s.StartKey = page.LastKey
				}
			}
		})
	}
	for _, seg := range plan.read {
		select {
		case next <- seg:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// storedRow is one item of the read-model table as the scan read it.
type storedRow struct {
	key  abi.Item
	item abi.Item
	at   time.Time // when it was read
}

// scanRows reads the planned segments of the projection's table: every
// stored item but outbox items, by key.
func (v *verifier) scanRows(ctx context.Context) error {
	plan := planSegments(v.o.Segments, v.o.Sample, v.rng)
	return v.h.scanSegments(ctx, store.Scan{Table: v.p.Table}, plan, v.o.Segments, func(items []abi.Item) {
		at := v.o.Now()
		for _, it := range items {
			if apply.IsOutboxItem(it) {
				continue
			}
			key := abi.Item{}
			for _, a := range v.p.KeyAttrs {
				if val, ok := it[a]; ok {
					key[a] = val
				}
			}
			ks := keyText(key)
			if _, dup := v.rows[ks]; !dup {
				v.rows[ks] = &storedRow{key: key, item: it, at: at}
				v.order = append(v.order, ks)
			}
		}
	})
}

// instEvents are one stream instance's events read so far (from version
// 1, in version order), and their keys by source.
type instEvents struct {
	mu   sync.Mutex
	evs  []abi.Event
	keys map[string][]abi.KeyResult
	read bool // read from the event store (by the walk or a query)
}

func (in *instEvents) head() uint64 {
	if len(in.evs) == 0 {
		return 0
	}
	return in.evs[len(in.evs)-1].Version
}

// streamKey names a stream instance by stream (its events are the same
// for every source that reads the stream).
type streamKey struct{ stream, id string }

// walkEvents scans the planned segments of the event table for the events
// of the projection's streams, keeps them by instance and keys them for
// every source that reads their stream; the rows they address go to the
// index.
func (v *verifier) walkEvents(ctx context.Context) error {
	layout := v.h.es.Layout()
	streams := v.e.Streams()
	names := map[string]string{"#m": eventstore.AttrMarker}
	vals := map[string]abi.Value{}
	var in []string
	for i, s := range streams {
		ph := fmt.Sprintf(":m%d", i)
		vals[ph] = abi.S(layout.Marker(s))
		in = append(in, ph)
	}
	sc := store.Scan{Table: v.h.es.Table(), Filter: "#m IN (" + strings.Join(in, ", ") + ")", Names: names, Values: vals}
	plan := planSegments(v.o.Segments, v.o.Sample, v.rng)
	byInst := map[streamKey][]abi.Event{}
	err := v.h.scanSegments(ctx, sc, plan, v.o.Segments, func(items []abi.Item) {
		for _, it := range items {
			d, ok, err := v.h.dopts.Decoder.Decode(it)
			if err != nil {
				v.rowError(nil, fmt.Errorf("an event item does not decode, so the rows of its stream instance are not checked: %w", err))
				continue
			}
			if !ok {
				continue
			}
			k := streamKey{d.Event.Stream, d.Event.StreamID}
			byInst[k] = append(byInst[k], d.Event)
			v.counts.Events++
		}
	})
	if err != nil {
		return err
	}
	for k, evs := range byInst {
		sort.Slice(evs, func(i, j int) bool { return evs[i].Version < evs[j].Version })
		// An instance whose versions are not 1, 2, 3, ... (an item that did
		// not decode, or one filed under another instance's key) is read
		// again by its rows' checks, which then fail on what is wrong.
		v.insts[k] = &instEvents{evs: evs, keys: map[string][]abi.KeyResult{}, read: contiguous(evs)}
	}
	// key every instance for every source reading its stream, in parallel
	type job struct {
		ref apply.InstanceRef
		in  *instEvents
	}
	var jobs []job
	for k, in := range v.insts {
		for _, src := range v.p.Sources {
			if src.Stream == k.stream {
				jobs = append(jobs, job{apply.InstanceRef{Source: src.Name, StreamID: k.id}, in})
			}
		}
	}
	var mu sync.Mutex
	forEach(ctx, len(jobs), v.workers(), func(i int) {
		j := jobs[i]
		ks, err := v.keysOf(ctx, j.ref, j.in)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			v.rowError(nil, err)
			return
		}
		for n, kr := range ks {
			if kr.Key == nil || kr.Error != nil {
				continue
			}
			keyStr, err := v.e.CheckKey(kr.Key)
			if err != nil {
				v.rowError(nil, fmt.Errorf("%s v%d: %w", j.ref, j.in.evs[n].Version, err))
				continue
			}
			r := v.index[keyStr]
			if r == nil {
				r = &indexRow{key: kr.Key}
				v.index[keyStr] = r
			}
			r.add(InstanceRef{Source: j.ref.Source, StreamID: j.ref.StreamID})
		}
	})
	return ctx.Err()
}

// contiguous reports whether events are versions 1, 2, 3, ... in order.
func contiguous(evs []abi.Event) bool {
	for i, ev := range evs {
		if ev.Version != uint64(i)+1 {
			return false
		}
	}
	return true
}

// indexRow is a row the walked events address, and the instances whose
// events do.
type indexRow struct {
	key  abi.Item
	refs []InstanceRef
}

func (r *indexRow) add(ref InstanceRef) {
	for _, have := range r.refs {
		if have == ref {
			return
		}
	}
	r.refs = append(r.refs, ref)
}

// keysOf returns the keys of the instance's events for its source,
// calling the key function for those not keyed yet. in.mu is taken.
func (v *verifier) keysOf(ctx context.Context, ref apply.InstanceRef, in *instEvents) ([]abi.KeyResult, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	have := in.keys[ref.Source]
	if len(have) < len(in.evs) {
		ks, err := v.e.KeyEvents(ctx, ref, in.evs[len(have):])
		if err != nil {
			return nil, fmt.Errorf("keying the events of %s: %w", ref, err)
		}
		in.keys[ref.Source] = append(have, ks...)
	}
	return in.keys[ref.Source], nil
}

// events returns an instance's events and keys, reading them from the
// event store when the walk did not (a sample, an instance the row names
// that was not walked) or, with fresh, reading the versions after those
// read so far.
func (v *verifier) events(ctx context.Context, ref InstanceRef, fresh bool) ([]abi.Event, []abi.KeyResult, error) {
	stream := v.streamOf(ref.Source)
	k := streamKey{stream, ref.StreamID}
	v.mu.Lock()
	in := v.insts[k]
	if in == nil {
		in = &instEvents{keys: map[string][]abi.KeyResult{}}
		v.insts[k] = in
	}
	v.mu.Unlock()
	in.mu.Lock()
	if !in.read || fresh {
		after := in.head()
		if !in.read {
			after = 0 // what the walk found of it (if anything) is read again whole
		}
		evs, err := storeReader{v.h}.ReadFrom(ctx, stream, ref.StreamID, after, 0)
		if err != nil {
			in.mu.Unlock()
			return nil, nil, err
		}
		if !in.read {
			in.evs, in.keys = nil, map[string][]abi.KeyResult{}
		}
		in.evs, in.read = append(in.evs, evs...), true
		v.mu.Lock()
		v.counts.Events += len(evs)
		v.mu.Unlock()
	}
	in.mu.Unlock()
	ks, err := v.keysOf(ctx, apply.InstanceRef{Source: ref.Source, StreamID: ref.StreamID}, in)
	if err != nil {
		return nil, nil, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.evs[:len(ks)], ks, nil
}

func (v *verifier) streamOf(source string) string {
	for _, s := range v.p.Sources {
		if s.Name == source {
			return s.Stream
		}
	}
	return ""
}

// forEach runs f(0..n-1) on at most workers goroutines, until ctx ends.
func forEach(ctx context.Context, n, workers int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
}
