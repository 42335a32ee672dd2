package swap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/keys"
)

// The engine's own fields in a folded row, removed before rows are compared
// with a fixture: they are the host's, not the plugin's.
const (
	foldCheckpoint = "__fold_checkpoint"
	foldRevision   = "__fold_revision"
	foldMap        = "__fold_checkpoints"
)

// Fold runs events through l with the projection engine itself, over an
// empty read model: one ApplyBatch call, so the ordering (sources in
// declaration order, then stream id, then version), de-duplication, skips,
// rejections and failures are the engine's, not a copy of them. A row whose
// fold fails carries the error; a key that fails fails the whole fold.
// Rows come back sorted by key, as the plugin produced them (the engine's
// checkpoint and revision fields removed; nil when the row does not exist
// after the fold, or was removed: evolve's removeRow is folded as a host
// with removal configured does).
func Fold(ctx context.Context, l logic.Logic, events []SrcEvent) ([]Row, error) {
	res, err := FoldEvents(ctx, l, events)
	if err != nil {
		return nil, err
	}
	return res.Rows, nil
}

// Folded is what FoldEvents did: the rows, and what became of each event.
type Folded struct {
	Rows []Row
	// Decisions has one entry per event given, sorted by stream, stream
	// id, version and row.
	Decisions []Decision
}

// The outcomes of an event in a fold, as Decision.Outcome names them.
const (
	Applied       = "applied"     // evolve folded it into the row
	Skipped       = "skipped"     // evolve skipped it: the row unchanged, the event decided again later
	Rejected      = "rejected"    // evolve failed and terminal accepted the error: the row unchanged, the checkpoint past it
	Superseded    = "superseded"  // latest mode: a newer event of its instance was applied
	Duplicate     = "duplicate"   // the same version given twice: folded once
	NoRow         = "no row"      // key named no row: acknowledged, nothing folded
	FailedOutcome = "failed"      // the row (or this instance of it) failed: nothing of it applied
	NotDecided    = "not decided" // none of the above (an event the engine left out)
)

// Decision is what became of one event of a fold.
type Decision struct {
	Source  string    // the source that read it ("" when the plugin has one)
	Event   abi.Event // the event
	Row     abi.Item  // the row it addressed; nil for NoRow
	Outcome string    // Applied, Skipped, Rejected, Superseded, Duplicate, NoRow, FailedOutcome
	Err     error     // Rejected: the error terminal accepted; FailedOutcome: why the row failed
}

// FoldEvents is Fold, with the decision of every event: applied, skipped,
// rejected with the error terminal accepted, superseded, no row, or
// failed with the row's error.
func FoldEvents(ctx context.Context, l logic.Logic, events []SrcEvent) (*Folded, error) {
	d := l.Describe()
	var sources []apply.Source
	streams := map[string]bool{}
	for _, s := range d.Sources {
		sources = append(sources, apply.Source{Name: s.Name, Stream: s.Stream, Mode: s.Mode})
		streams[s.Stream] = true
	}
	inputs := make([]apply.Input, len(events))
	for i, e := range events {
		if !streams[e.Stream] || (e.Source != "" && !slices.ContainsFunc(d.Sources, func(s abi.SourceDesc) bool { return s.Name == e.Source })) {
			return nil, fmt.Errorf("event %d (%s %s v%d): the plugin has no source for it (sources: %s)", i, e.Stream, e.StreamID, e.Version, sourcesText(d.Sources))
		}
		inputs[i] = apply.Input{Source: e.Source, Event: e.Event, Pos: i}
	}
	attrs, err := keyAttrs(ctx, l, d.Sources, events)
	if err != nil {
		return nil, err
	}
	if attrs == nil { // no event names a row
		f := &Folded{}
		for _, e := range events {
			f.Decisions = append(f.Decisions, Decision{Source: e.Source, Event: e.Event, Outcome: NoRow})
		}
		sortDecisions(f.Decisions)
		return f, nil
	}
	p := apply.Projection{
		Name: d.Name, Table: "fold", KeyAttrs: attrs, Sources: sources, Logic: l,
		Checkpoint: apply.Checkpoint{Field: foldCheckpoint}, Rows: 1,
		Removal: &apply.Removal{EntityType: d.Name}, // a removed row comes back absent
		Now:     func() time.Time { return time.Time{} },
		// Every item and effect is checked against DynamoDB's rules, as
		// the engine checks them before a write: a module whose output
		// DynamoDB would refuse fails its row here, before it serves.
		CheckEffects: true,
	}
	if len(sources) > 1 {
		p.Revision = &apply.Revision{Field: foldRevision}
		p.Checkpoint = apply.Checkpoint{Map: foldMap}
	}
	db := &foldStore{attrs: attrs, rows: map[string]abi.Item{}}
	e, err := apply.New(p, db, foldEvents(events))
	if err != nil {
		return nil, err
	}
	res := e.ApplyBatch(ctx, inputs)
	for _, kf := range res.KeyFailures {
		return nil, fmt.Errorf("key of %s %s v%d: %v", kf.Event.Stream, kf.Event.StreamID, kf.Event.Version, kf.Err)
	}
	out := make([]Row, 0, len(res.Rows))
	decided := make([]*Decision, len(events))
	for _, ig := range res.Ignored {
		decided[ig.Pos] = &Decision{Source: events[ig.Pos].Source, Event: ig.Event, Outcome: NoRow}
	}
	for _, o := range res.Rows {
		decide(decided, events, o)
		row := Row{Key: o.Key, Err: o.Err}
		if o.Err == nil && !o.Removed {
			row.Item = db.rows[keys.String(o.Key)]
			delete(row.Item, foldCheckpoint)
			delete(row.Item, foldRevision)
			delete(row.Item, foldMap)
		}
		var re *apply.RowError
		if errors.As(row.Err, &re) {
			row.Err = re.Cause // the fixture's messages name the row themselves
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return KeyString(out[i].Key) < KeyString(out[j].Key) })
	f := &Folded{Rows: out}
	for i, d := range decided {
		if d == nil {
			d = &Decision{Source: events[i].Source, Event: events[i].Event, Outcome: NotDecided}
		}
		f.Decisions = append(f.Decisions, *d)
	}
	sortDecisions(f.Decisions)
	return f, nil
}

// decide records what the row's outcome says of each of its events, by
// their positions in the fold's input.
func decide(decided []*Decision, events []SrcEvent, o apply.Outcome) {
	set := func(pos int, ev abi.Event, outcome string, err error) {
		if pos >= 0 && pos < len(decided) && decided[pos] == nil {
			decided[pos] = &Decision{Source: events[pos].Source, Event: ev, Row: o.Key, Outcome: outcome, Err: err}
		}
	}
	cause := o.Err
	var re *apply.RowError
	if errors.As(cause, &re) {
		cause = re.Cause
	}
	if o.Err != nil {
		var ee *apply.EventError
		bad := errors.As(cause, &ee)
		for _, pos := range o.Positions {
			ev := events[pos].Event
			if bad && (ev.Stream != ee.Event.Stream || ev.StreamID != ee.Event.StreamID || ev.Version != ee.Event.Version) {
				// the row failed on another event: name it, not its error
				set(pos, ev, FailedOutcome, fmt.Errorf("not written: the row failed on %s %s v%d (%s)", ee.Event.Stream, ee.Event.StreamID, ee.Event.Version, ee.Event.Type))
				continue
			}
			set(pos, ev, FailedOutcome, cause)
		}
		return
	}
	for _, in := range o.Instances {
		// positions of the instance's events, by version (a duplicate
		// version keeps its first position, the others are duplicates)
		at := map[uint64]int{}
		for _, pos := range in.Positions {
			v := events[pos].Version
			if _, ok := at[v]; ok {
				set(pos, events[pos].Event, Duplicate, nil)
				continue
			}
			at[v] = pos
		}
		pos := func(ev abi.Event) int {
			if p, ok := at[ev.Version]; ok {
				return p
			}
			return -1 // not one of the given events
		}
		if in.Err != nil {
			for _, p := range at {
				set(p, events[p].Event, FailedOutcome, in.Err)
			}
			continue
		}
		for _, ev := range in.Applied {
			set(pos(ev), ev, Applied, nil)
		}
		for _, ev := range in.Skipped {
			set(pos(ev), ev, Skipped, nil)
		}
		for _, r := range in.Rejected {
			var err error
			if r.Error != nil {
				err = r.Error
			}
			set(pos(r.Event), r.Event, Rejected, err)
		}
		for _, ev := range in.Superseded {
			set(pos(ev), ev, Superseded, nil)
		}
		for _, ev := range in.AlreadyApplied {
			set(pos(ev), ev, Duplicate, nil)
		}
	}
}

// sortDecisions orders decisions by stream, stream id, version and row.
func sortDecisions(ds []Decision) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Event, ds[j].Event
		if a.Stream != b.Stream {
			return a.Stream < b.Stream
		}
		if a.StreamID != b.StreamID {
			return a.StreamID < b.StreamID
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return KeyString(ds[i].Row) < KeyString(ds[j].Row)
	})
}

// keyAttrs returns the names of the attributes of the first key the plugin
// gives the events (the read model's key attributes), sorted; nil when no
// event names a row.
func keyAttrs(ctx context.Context, l logic.Logic, sources []abi.SourceDesc, events []SrcEvent) ([]string, error) {
	for _, s := range sources {
		var evs []abi.Event
		for _, e := range events {
			if e.Stream == s.Stream && (e.Source == "" || e.Source == s.Name) {
				evs = append(evs, e.Event)
			}
		}
		if len(evs) == 0 {
			continue
		}
		resp, err := l.Key(ctx, &abi.KeyRequest{Source: s.Name, Events: evs})
		if err != nil {
			return nil, fmt.Errorf("key (source %s): %w", s.Name, err)
		}
		for i, k := range resp.Keys {
			if k.Error != nil {
				return nil, fmt.Errorf("key of %s %s v%d: %v", evs[i].Stream, evs[i].StreamID, evs[i].Version, k.Error)
			}
			if k.Key != nil {
				names := make([]string, 0, len(k.Key))
				for n := range k.Key {
					names = append(names, n)
				}
				sort.Strings(names)
				return names, nil
			}
		}
	}
	return nil, nil
}

// foldEvents is the event store of a fold: the fixture's events, read
// back for the engine's gap fills.
type foldEvents []SrcEvent

// ReadFrom implements apply.EventReader.
func (f foldEvents) ReadFrom(_ context.Context, stream, streamID string, after, to uint64) ([]abi.Event, error) {
	seen := map[uint64]bool{}
	var out []abi.Event
	for _, e := range f {
		if e.Stream == stream && e.StreamID == streamID && e.Version > after && (to == 0 || e.Version <= to) && !seen[e.Version] {
			seen[e.Version] = true
			out = append(out, e.Event)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// foldStore is the read model of one fold: empty at the start and written
// once per row by the one ApplyBatch call of Fold, with nothing else
// writing, so the engine's write conditions hold by construction and are
// not evaluated. It serves reads and puts only.
type foldStore struct {
	attrs []string
	mu    sync.Mutex
	rows  map[string]abi.Item
}

var errFoldStore = errors.New("not used by a smoke-test fold")

func (s *foldStore) key(it abi.Item) string {
	k := make(abi.Item, len(s.attrs))
	for _, a := range s.attrs {
		k[a] = it[a]
	}
	return keys.String(k)
}

func (s *foldStore) GetItem(_ context.Context, _ string, key abi.Item) (abi.Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return abi.CloneItem(s.rows[s.key(key)]), nil
}

func (s *foldStore) BatchGetItem(ctx context.Context, table string, ks []abi.Item) ([]abi.Item, error) {
	out := make([]abi.Item, len(ks))
	for i, k := range ks {
		out[i], _ = s.GetItem(ctx, table, k)
	}
	return out, nil
}

func (s *foldStore) PutItem(_ context.Context, p store.Put) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[s.key(p.Item)] = abi.CloneItem(p.Item)
	return nil
}

func (s *foldStore) TransactWriteItems(ctx context.Context, writes []store.Write) error {
	for _, w := range writes {
		if w.Put == nil {
			return fmt.Errorf("transaction write: %w", errFoldStore)
		}
		if w.Put.Table == "fold" {
			if err := s.PutItem(ctx, *w.Put); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *foldStore) UpdateItem(context.Context, store.Update) (abi.Item, error) {
	return nil, fmt.Errorf("UpdateItem: %w", errFoldStore)
}

func (s *foldStore) DeleteItem(context.Context, store.Delete) error {
	return fmt.Errorf("DeleteItem: %w", errFoldStore)
}

func (s *foldStore) Query(context.Context, store.Query) (store.Page, error) {
	return store.Page{}, fmt.Errorf("Query: %w", errFoldStore)
}
