package apply

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/itemcheck"
	"github.com/dynafold/dynafold/internal/keys"
)

// instanceID names a stream instance read by a source.
type instanceID struct {
	source   string
	streamID string
}

// rowWork is what one call brings to one row.
type rowWork struct {
	key       abi.Item
	keyStr    string
	instances rowInstances
	rebuild   bool        // fold from version 1 and initial, ignoring the row's state (rebuild.go)
	repair    *repairWork // a rebuild or catch-up of the row (nil: a delivery)
	refold    bool        // a rebuild computed without writing, to compare (Refold)
	enqueued  int         // the effects the row's write committed (outbox)
	committed *Committed  // what the write committed, for Outbox.Deliver
	// A run whose effects do not fit one transaction is written in steps
	// (steps.go): more is set while the write is one, stepItem holds the
	// row it wrote, steps what the steps written so far did.
	more     bool
	stepItem abi.Item
	steps    *stepped
}

// ApplyBatch applies decoded events to the projection's rows:
// per row, concurrently, it sorts and de-duplicates, reads the row and its
// checkpoints, fills gaps, folds once and writes once. It never fails as a
// whole; each row has its own outcome.
func (e *Engine) ApplyBatch(ctx context.Context, inputs []Input) Result {
	res := Result{Projection: e.p.Name}
	// present holds, per source instance, the versions the batch brings
	// whose row is known (this row, another row or none): a gap-fill needs
	// to read only versions missing from it. Events whose key failed are
	// not present, so no checkpoint passes them.
	instances := instanceRuns(inputs) // about the batch's instances and rows: the maps' size
	present := make(presence, instances)
	bySource := map[string][]Input{}
	if len(e.p.Sources) == 1 { // the usual projection: every input at most once, no growth
		bySource[e.p.Sources[0].Name] = make([]Input, 0, len(inputs))
	}
	for _, in := range inputs {
		for _, s := range e.p.Sources {
			if s.Stream != in.Event.Stream || (in.Source != "" && in.Source != s.Name) {
				continue
			}
			in.Source = s.Name
			bySource[s.Name] = append(bySource[s.Name], in)
		}
	}

	rows := make(map[string]*rowWork, instances)
	order := make([]string, 0, instances)
	for _, s := range e.p.Sources {
		ins := bySource[s.Name]
		if len(ins) == 0 {
			continue
		}
		keys, err := e.keys(ctx, s.Name, inputEvents(ins))
		for i, in := range ins {
			switch {
			case err != nil:
				res.KeyFailures = append(res.KeyFailures, KeyFailure{Event: in.Event, Pos: in.Pos, Err: err})
			case keys[i].Error != nil:
				res.KeyFailures = append(res.KeyFailures, KeyFailure{Event: in.Event, Pos: in.Pos, Err: keys[i].Error})
			case keys[i].Key == nil:
				present.mark(instanceID{s.Name, in.Event.StreamID}, in.Event.Version)
				res.Ignored = append(res.Ignored, Ignored{Event: in.Event, Pos: in.Pos})
			default:
				k, kerr := e.checkKey(keys[i].Key)
				if kerr != nil {
					res.KeyFailures = append(res.KeyFailures, KeyFailure{Event: in.Event, Pos: in.Pos, Err: kerr})
					continue
				}
				w := rows[k]
				if w == nil {
					w = &rowWork{key: keys[i].Key, keyStr: k}
					rows[k] = w
					order = append(order, k)
				}
				id := instanceID{s.Name, in.Event.StreamID}
				present.mark(id, in.Event.Version)
				w.instances.add(id, in, func() int { return runAt(ins, i) })
			}
		}
	}
	if len(order) == 0 {
		return res
	}
	if e.p.Limit != nil {
		if err := e.waitLimit(ctx, rows, order, &res); err != nil {
			return res
		}
	}

	present.sealAll()
	res.Rows = make([]Outcome, len(order))
	e.dispatch(ctx, order, rows, present, res.Rows)
	return res
}

// readChunk is the most keys one BatchGetItem reads.
const readChunk = 100

// dispatch runs the rows' steps, each row on its own as soon as what it
// depends on is there: the rows are read 100 keys per BatchGetItem, those
// requests all at once, and a row starts (gap read, fold, write, delivery)
// as soon as its read returns, while at most Projection.Rows rows run at
// once; a fresh row (fresh.go) starts without a read, and a gap-shaped
// row's gap read may go beside its read (prefetch.go). outs[i] receives
// the outcome of the row order[i].
func (e *Engine) dispatch(ctx context.Context, order []string, rows map[string]*rowWork, present presence, outs []Outcome) {
	sem := make(chan struct{}, e.p.Rows)
	var wg sync.WaitGroup
	start := func(i int, run func() Outcome) {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			growStack()
			outs[i] = run()
			e.afterRow(ctx, rows[order[i]], &outs[i])
		}()
	}
	// The rows to read: all but the fresh ones while those skip the read.
	read, fresh := make([]int, 0, len(order)), []int(nil)
	skip := e.skipsRead()
	for i, k := range order {
		if skip && freshRow(rows[k]) {
			fresh = append(fresh, i)
			continue
		}
		read = append(read, i)
	}
	for at := 0; at < len(read); at += readChunk {
		chunk := read[at:min(at+readChunk, len(read))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := make([]*rowWork, len(chunk))
			keys := make([]abi.Item, len(chunk))
			for j, i := range chunk {
				ws[j] = rows[order[i]]
				keys[j] = ws[j].key
			}
			ahead := e.readAhead(ctx, ws, present)
			items, err := e.db.BatchGetItem(ctx, e.p.Table, keys)
			for j, i := range chunk {
				w, gaps := ws[j], ahead.of(j)
				if err != nil {
					gaps.wait()
					outs[i] = e.failed(w, fmt.Errorf("reading the row (BatchGetItem on %s): %w", e.p.Table, err))
					continue
				}
				item := items[j]
				e.readFresh(w, item)
				start(i, func() Outcome { return e.applyRead(ctx, w, item, present, gaps) })
			}
		}()
	}
	for _, i := range fresh {
		w := rows[order[i]]
		start(i, func() Outcome { return e.applyFresh(ctx, w, present) })
	}
	wg.Wait()
}

// rowStack is the room a row's goroutine makes on its stack at its start:
// with what it holds already, more than 8 KB, so the stack grows to 16 KB,
// which a row's steps (the fold above all) fit in. (16 KB here made it 32
// KB: from the shared pool of large stacks rather than the processor's
// cache, and the 16 KB zeroed cost more than the growth it saved.)
const rowStack = 8 << 10

// growStack grows the calling goroutine's stack to hold rowStack bytes
// more, while it is shallow. A goroutine starts with a small stack and
// doubles it each time a call needs more, copying what it holds; grown
// at the start, the copy is of a frame or two, where grown under a
// row's fold it is of every frame of the fold's deep calls, several times
// over (10 µs of a row's CPU in BenchmarkBatchRoundTrips' profile).
//
//go:noinline
func growStack() {
	var pad [rowStack]byte
	keepStack(pad[:])
}

//go:noinline
func keepStack(b []byte) { b[0] = 0 }

// runAt is the number of inputs from ins[i] on of the same stream instance,
// up to maxRunAt: the events of an instance a batch brings are most often
// next to each other, and of one row.
func runAt(ins []Input, i int) int {
	n := 1
	for j := i + 1; j < len(ins) && n < maxRunAt && ins[j].Event.StreamID == ins[i].Event.StreamID; j++ {
		n++
	}
	return n
}

// instanceRuns is the number of runs of inputs of one stream instance in
// the batch: the number of its instances when each instance's inputs are
// together, as they most often are, and at most the number of inputs.
func instanceRuns(ins []Input) int {
	n := 0
	for i := range ins {
		if i == 0 || ins[i].Event.StreamID != ins[i-1].Event.StreamID || ins[i].Event.Stream != ins[i-1].Event.Stream {
			n++
		}
	}
	return n
}

// maxRunAt bounds runAt's look-ahead: a batch of many rows of one stream
// instance (a key taken from the event's data) is not scanned once per row.
const maxRunAt = 64

func inputEvents(ins []Input) []abi.Event {
	evs := make([]abi.Event, len(ins))
	for i, in := range ins {
		evs[i] = in.Event
	}
	return evs
}

// keys calls the logic's key function for a source's events.
func (e *Engine) keys(ctx context.Context, source string, evs []abi.Event) ([]abi.KeyResult, error) {
	resp, err := e.p.Logic.Key(ctx, &abi.KeyRequest{Source: source, Events: evs})
	if err != nil {
		return nil, err
	}
	if len(resp.Keys) != len(evs) {
		return nil, fmt.Errorf("plugin %s: key returned %d results for %d events", e.plugin, len(resp.Keys), len(evs))
	}
	return resp.Keys, nil
}

// checkKey validates a row key against the table's key attributes and
// returns its canonical string.
func (e *Engine) checkKey(k abi.Item) (string, error) {
	if len(k) != len(e.p.KeyAttrs) {
		return "", fmt.Errorf("plugin %s: key returned attributes %v, but table %s is keyed by %v", e.plugin, itemNames(k), e.p.Table, e.p.KeyAttrs)
	}
	for i, a := range e.p.KeyAttrs {
		v, ok := k[a]
		if !ok {
			return "", fmt.Errorf("plugin %s: key lacks the key attribute %q of table %s", e.plugin, a, e.p.Table)
		}
		switch v.Kind {
		case abi.KindS, abi.KindB:
			n := len(v.Str) + len(v.Bytes)
			if n == 0 {
				return "", fmt.Errorf("plugin %s: key attribute %q is empty; DynamoDB refuses empty key values", e.plugin, a)
			}
			if limit := keyLimit(i); n > limit {
				return "", fmt.Errorf("plugin %s: key attribute %q is %d bytes long; DynamoDB refuses a %s key value over %d bytes: shorten it in the plugin's key function (a hash of a long id, for one)",
					e.plugin, a, n, keyRole(i), limit)
			}
		case abi.KindN:
			if p := itemcheck.Value(v); p != nil {
				return "", fmt.Errorf("plugin %s: key attribute %q %s; fix the plugin's key function", e.plugin, a, p.What)
			}
		default:
			return "", fmt.Errorf("plugin %s: key attribute %q is of type %s; key attributes are S, N or B", e.plugin, a, v.Kind)
		}
	}
	return keyString(k), nil
}

// DynamoDB's limits on a key value's length: a partition key (the first
// key attribute) 2048 bytes, a sort key 1024.
func keyLimit(i int) int {
	if i == 0 {
		return 2048
	}
	return 1024
}

func keyRole(i int) string {
	if i == 0 {
		return "partition"
	}
	return "sort"
}

func itemNames(it abi.Item) []string {
	out := make([]string, 0, len(it))
	for k := range it {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// keyString is the key's one readable form (internal/keys).
func keyString(k abi.Item) string { return keys.String(k) }

// failed is the outcome of a row that failed before its fold.
func (e *Engine) failed(w *rowWork, err error) Outcome {
	o := Outcome{Key: w.key, Positions: w.positions()}
	o.Err = &RowError{Projection: e.p.Name, Key: w.keyStr, Cause: err}
	for _, ri := range w.instances.list {
		o.Instances = append(o.Instances, Instance{Source: ri.id.source, StreamID: ri.id.streamID, Positions: instancePositions(ri.ins), Err: err})
	}
	return o
}

// failedRuns is the outcome of a row whose every instance failed: nothing
// is written; the row's error is its first instance's (in fold order), and
// each instance reports its own.
func (e *Engine) failedRuns(w *rowWork, runs []*run) Outcome {
	o := Outcome{Key: w.key, Positions: w.positions()}
	o.Err = &RowError{Projection: e.p.Name, Key: w.keyStr, Cause: runs[0].failed}
	for _, r := range runs {
		o.Instances = append(o.Instances, Instance{Source: r.id.source, StreamID: r.id.streamID, AlreadyApplied: r.already,
			Positions: instancePositions(w.instances.of(r.id)), Err: r.failed})
	}
	return o
}

// instancePositions returns the record positions of an instance's events,
// ascending.
func instancePositions(ins []Input) []int {
	var ps []int
	for _, in := range ins {
		if in.Pos >= 0 {
			if ps == nil {
				ps = make([]int, 0, len(ins))
			}
			ps = append(ps, in.Pos)
		}
	}
	return sortedPositions(ps)
}

// positions returns the record positions of the row's events, ascending.
func (w *rowWork) positions() []int {
	if len(w.instances.list) == 1 {
		return instancePositions(w.instances.list[0].ins)
	}
	n := 0
	for _, ri := range w.instances.list {
		n += len(ri.ins)
	}
	var ps []int
	for _, ri := range w.instances.list {
		for _, in := range ri.ins {
			if in.Pos >= 0 {
				if ps == nil {
					ps = make([]int, 0, n)
				}
				ps = append(ps, in.Pos)
			}
		}
	}
	return sortedPositions(ps)
}

// sortedPositions sorts ps and drops its repeats.
func sortedPositions(ps []int) []int {
	slices.Sort(ps)
	return slices.Compact(ps)
}
