package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/keys"
)

// WrittenByReport is what RebuildWrittenBy found and did.
type WrittenByReport struct {
	Table     string // the projection's table
	WrittenBy string // name@version whose rows were looked for; several are joined with ", "
	// NotWrittenBy is the name@version of a WrittenBySelection's NotBy:
	// the rows looked for were every row but that version's own.
	NotWrittenBy string
	Rows         int // rows of the table that version wrote (or, with NotWrittenBy, that another version did)
	// Streams lists the stream instances that fed one of those rows,
	// rebuilt (or to rebuild, on a dry run): the stream id, or
	// "<source>#<streamId>" for a projection with several sources.
	Streams []string
	// ToRebuild is the number of rows those instances' events address with
	// the plugin now serving: every row they feed, the rows that version
	// never wrote included.
	ToRebuild int
	// Outcomes are the rebuilt rows, one per row (none on a dry run), and
	// Changes what each rebuild did to its row, parallel to Outcomes.
	Outcomes []Outcome
	Changes  []RebuildChange
	// Created, Changed, Unchanged and Removed count the rebuilt rows: made
	// by the rebuild (none, or a tombstone, was there), rewritten with other
	// attributes than they held (the writtenBy attribute and the revision,
	// which every rebuild sets, aside), held as they were, and removed (a
	// tombstone now). Failed counts the rows whose rebuild failed (their
	// outcome has the error). A key whose events make no row, before or
	// after, is in none of them.
	Created, Changed, Unchanged, Removed, Failed int
	// Writers are the versions the table's rows name as their writer
	// (sorted, at most MaxWritersNamed), and OtherWriters how many more
	// there are: what to check a version given against when it matches no
	// row (a mistyped 1.0 for 1.0.0).
	Writers      []string
	OtherWriters int
	// NotByRows, with NotWrittenBy, counts the rows that version wrote:
	// none means the version names no row, so that every row is rebuilt.
	NotByRows int
}

// MaxWritersNamed bounds WrittenByReport.Writers.
const MaxWritersNamed = 5

// RebuildWrittenBy re-derives, with the plugin now serving, every row of
// every stream instance that fed a row a given plugin version wrote (the
// projection's writtenBy attribute records it), exactly as RebuildInstance
// does for each of those instances: the instances whose events address
// such a row are found over every source, and every row their events
// address is rebuilt once, as RebuildRowAll does, from those instances and
// every other the row names. The rows the serving plugin makes and that
// version never wrote (an event it skipped, a row keyed anew) are created
// too. An instance that fed no row of that version is not rebuilt: a
// backfill re-derives a whole read model. version is "1.0.0" (the plugin's
// name is added) or "name@1.0.0". With dryRun, it only finds them.
//
// A row whose rebuild fails does not stop the others: its outcome holds
// the error, and the returned error joins them. Items of the event table
// that name no instance (see EventItemsError) are left out and reported
// in the error too.
func (h *Host) RebuildWrittenBy(ctx context.Context, projection, version string, dryRun bool) (WrittenByReport, error) {
	if version == "" {
		return WrittenByReport{}, fmt.Errorf("no plugin version given: which version's rows to rebuild (e.g. 1.0.0)")
	}
	return h.RebuildWrittenBySelection(ctx, projection, WrittenBySelection{Versions: []string{version}}, dryRun)
}

// WrittenBySelection says which rows RebuildWrittenBySelection looks for.
// A version is "1.0.0" (the plugin's name is added) or "name@1.0.0".
type WrittenBySelection struct {
	// Versions: the rows any of these versions wrote, or a later version
	// folded on top of what one of them wrote.
	Versions []string
	// NotBy, instead of Versions: every row that version did not write
	// alone, its writer another version or a version named among those
	// before its writer. Given the version serving, it finds what every
	// older version left, whichever they were. Rows that record no writer
	// are left out (a backfill, or verify's repair, re-derives them).
	NotBy string
}

// RebuildWrittenBySelection is RebuildWrittenBy for the rows of several
// versions at once, or for every row but one version's own (see
// WrittenBySelection).
func (h *Host) RebuildWrittenBySelection(ctx context.Context, projection string, sel WrittenBySelection, dryRun bool) (WrittenByReport, error) {
	e, err := h.engine(projection)
	if err != nil {
		return WrittenByReport{}, err
	}
	p := e.Projection()
	attr := p.WrittenBy
	for _, pc := range h.cfg.Projections {
		if pc.Name == projection && pc.WrittenBy != "" {
			attr = pc.WrittenBy // the engine leaves it to a hot-swapped plugin
		}
	}
	rep := WrittenByReport{Table: p.Table}
	if attr == "" {
		return rep, fmt.Errorf("projection %q records no writtenBy attribute; set \"writtenBy\" in its configuration", projection)
	}
	full := func(version string) string {
		if !strings.Contains(version, "@") {
			return p.Logic.Describe().Name + "@" + version
		}
		return version
	}
	// One scan of the rows that name a writer, the selection made here:
	// the writers it sees are what to check a version against that matches
	// no row.
	scan := store.Scan{
		Table:  p.Table,
		Filter: "attribute_exists(#wb)",
		Names:  map[string]string{"#wb": attr, "#before": apply.WrittenByBefore(attr)},
	}
	proj := []string{"#wb", "#before"}
	for i, a := range p.KeyAttrs {
		ph := fmt.Sprintf("#k%d", i)
		scan.Names[ph] = a
		proj = append(proj, ph)
	}
	scan.Projection = strings.Join(proj, ", ")
	var match func(writer string, before []string, hasBefore bool) bool
	switch {
	case sel.NotBy != "" && len(sel.Versions) > 0:
		return rep, fmt.Errorf("give the versions whose rows to rebuild, or the one version whose rows to keep, not both")
	case sel.NotBy != "":
		// A row another version wrote, or folded on before this one wrote
		// it (the versions before the writer never include the writer).
		rep.NotWrittenBy = full(sel.NotBy)
		match = func(writer string, _ []string, hasBefore bool) bool {
			return writer != rep.NotWrittenBy || hasBefore
		}
	case len(sel.Versions) == 0:
		return rep, fmt.Errorf("no plugin version given: which version's rows to rebuild (e.g. 1.0.0)")
	default:
		// A row that one of the versions wrote, or that a later version
		// folded on top of what it wrote (the versions before the writer:
		// a hot swap's rows).
		var names []string
		want := map[string]bool{}
		for _, v := range sel.Versions {
			if v == "" {
				return rep, fmt.Errorf("an empty plugin version in the list: give each as 1.0.0 or name@1.0.0, separated by commas")
			}
			names = append(names, full(v))
			want[full(v)] = true
		}
		rep.WrittenBy = strings.Join(names, ", ")
		match = func(writer string, before []string, _ bool) bool {
			return want[writer] || slices.ContainsFunc(before, func(b string) bool { return want[b] })
		}
	}
	version := rep.WrittenBy
	if rep.NotWrittenBy != "" {
		version = "another version than " + rep.NotWrittenBy
	}
	written := map[string]bool{}
	writers := map[string]bool{}
	err = h.scan(ctx, scan, func(it abi.Item) {
		writer := it[attr].Str
		writers[writer] = true
		if rep.NotWrittenBy != "" && writer == rep.NotWrittenBy {
			rep.NotByRows++
		}
		b, hasBefore := it[apply.WrittenByBefore(attr)]
		var before []string
		for _, v := range b.List {
			before = append(before, v.Str)
		}
		if !match(writer, before, hasBefore) {
			return
		}
		key := abi.Item{}
		for _, a := range p.KeyAttrs {
			key[a] = it[a]
		}
		written[keys.String(key)] = true
	})
	if err != nil {
		return rep, fmt.Errorf("scanning %s for rows written by %s: %w", p.Table, version, err)
	}
	rep.Writers = slices.Sorted(maps.Keys(writers))
	if n := len(rep.Writers); n > MaxWritersNamed {
		rep.Writers, rep.OtherWriters = rep.Writers[:MaxWritersNamed], n-MaxWritersNamed
	}
	rep.Rows = len(written)
	if len(written) == 0 {
		return rep, nil
	}
	plan, err := h.writtenByPlan(ctx, e, written)
	if err != nil {
		return rep, err
	}
	rep.Streams, rep.ToRebuild = plan.streams, len(plan.order)
	if dryRun {
		return rep, plan.skipped
	}
	errs := []error{plan.skipped}
	for _, ks := range plan.order {
		key := plan.keyOf[ks]
		before, err := h.db.GetItem(ctx, p.Table, key)
		if err != nil {
			return rep, fmt.Errorf("reading row %s before its rebuild: %w", ks, err)
		}
		o, err := e.RebuildRowAll(ctx, key, engineRefs(plan.hits[ks]))
		out := outcomeOf(o)
		if err != nil && out.Err == nil {
			out = Outcome{Key: key, Err: err}
		}
		rep.count(out, before, attr, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("rebuild of row %s: %w", ks, err))
		}
	}
	return rep, errors.Join(errs...)
}

// writtenByPlan is what RebuildWrittenBy rebuilds: every row the instances
// that fed a written row address, each with the instances that address it.
type writtenByPlan struct {
	streams []string
	order   []string                 // row keys, in the order first found
	keyOf   map[string]abi.Item      // by row key
	hits    map[string][]InstanceRef // the found instances addressing each row
	skipped error                    // the event items left out of the scan
}

func (h *Host) writtenByPlan(ctx context.Context, e *apply.Engine, written map[string]bool) (*writtenByPlan, error) {
	p := e.Projection()
	plan := &writtenByPlan{keyOf: map[string]abi.Item{}, hits: map[string][]InstanceRef{}}
	ids := map[string][]string{} // by stream, scanned once
	var skipped []error
	for _, src := range p.Sources {
		if _, ok := ids[src.Stream]; !ok {
			found, err := h.streamIDs(ctx, src.Stream)
			var items *EventItemsError
			switch {
			case errors.As(err, &items):
				skipped = append(skipped, err)
			case err != nil:
				return nil, err
			}
			ids[src.Stream] = found
		}
		for _, id := range ids[src.Stream] {
			ref := InstanceRef{Source: src.Name, StreamID: id}
			rows, err := e.RowsOf(ctx, apply.InstanceRef{Source: src.Name, StreamID: id})
			if err != nil {
				return nil, fmt.Errorf("rows of %s %s: %w", src.Stream, id, err)
			}
			fed := false
			for _, k := range rows {
				if written[keys.String(k)] {
					fed = true
					break
				}
			}
			if !fed {
				continue
			}
			// Every row of an instance that fed a written row, as a
			// rebuild of the instance does.
			for _, k := range rows {
				ks := keys.String(k)
				if _, ok := plan.keyOf[ks]; !ok {
					plan.keyOf[ks] = k
					plan.order = append(plan.order, ks)
				}
				plan.hits[ks] = append(plan.hits[ks], ref)
			}
			name := id
			if len(p.Sources) > 1 {
				name = ref.String()
			}
			plan.streams = append(plan.streams, name)
		}
	}
	plan.skipped = errors.Join(skipped...)
	return plan, nil
}

// RebuildChange is what a rebuild did to a row.
type RebuildChange string

// The changes a rebuild makes to a row.
const (
	RebuildCreated   RebuildChange = "created"   // no row (or a tombstone) was there
	RebuildChanged   RebuildChange = "changed"   // rewritten with other attributes
	RebuildUnchanged RebuildChange = "unchanged" // the row holds what it held
	RebuildRemoved   RebuildChange = "removed"   // the row is a tombstone now
	RebuildNoRow     RebuildChange = "no row"    // the events make no row, and none was there
	RebuildFailed    RebuildChange = "failed"    // the rebuild failed (the outcome has the error)
)

// count adds a rebuilt row to the report; before is the item the table
// held before the rebuild (nil: none).
func (r *WrittenByReport) count(o Outcome, before abi.Item, writtenBy string, p apply.Projection) {
	was := before != nil && !apply.IsTombstone(before)
	var c RebuildChange
	switch {
	case o.Err != nil:
		c = RebuildFailed
		r.Failed++
	case !was && o.Written && !o.Removed:
		c = RebuildCreated
		r.Created++
	case !was:
		c = RebuildNoRow
	case o.Written && o.Removed:
		c = RebuildRemoved
		r.Removed++
	case o.Written && !sameRow(before, o.State, writtenBy, p):
		c = RebuildChanged
		r.Changed++
	default:
		c = RebuildUnchanged
		r.Unchanged++
	}
	r.Outcomes = append(r.Outcomes, o)
	r.Changes = append(r.Changes, c)
}

// sameRow compares two items of a row leaving out what every write sets:
// the writtenBy attribute (and the versions before it) and the revision.
func sameRow(a, b abi.Item, writtenBy string, p apply.Projection) bool {
	skip := map[string]bool{writtenBy: true, apply.WrittenByBefore(writtenBy): true}
	if p.Revision != nil {
		skip[p.Revision.Field] = true
	}
	strip := func(it abi.Item) abi.Item {
		out := make(abi.Item, len(it))
		for k, v := range it {
			if !skip[k] {
				out[k] = v
			}
		}
		return out
	}
	return abi.ItemsEqual(strip(a), strip(b))
}
