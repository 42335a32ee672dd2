package apply

import "github.com/dynafold/dynafold/abi"

// maxWritersBefore bounds the versions a row's WrittenByBefore list keeps
// (the oldest go first).
const maxWritersBefore = 16

// WrittenByBefore names the attribute that lists, beside the writtenBy
// attribute named writtenBy, the other plugin versions ("name@version")
// whose state the row was folded on since it was last folded from its
// initial state (a rebuild): a version hot-swapped in folds the next events
// on the row the one before it wrote, so the row derives from both, and
// re-deriving the rows one version wrote must find this row too. Oldest
// first; at most 16.
func WrittenByBefore(writtenBy string) string { return writtenBy + "Before" }

// writersBefore is the WrittenByBefore list of a row that version by
// writes: empty for a rebuild (folded from the initial state), else the
// stored row's list, with the stored row's writer when that was another
// version.
func writersBefore(w *rowWork, row *rowState, writtenBy, by string) []abi.Value {
	if w.rebuild || row.item == nil {
		return nil
	}
	var out []abi.Value
	seen := map[string]bool{by: true}
	add := func(v abi.Value) {
		if v.Kind == abi.KindS && v.Str != "" && !seen[v.Str] {
			seen[v.Str] = true
			out = append(out, v)
		}
	}
	if l, ok := row.item[WrittenByBefore(writtenBy)]; ok && l.Kind == abi.KindL {
		for _, v := range l.List {
			add(v)
		}
	}
	add(row.item[writtenBy])
	if len(out) > maxWritersBefore {
		out = out[len(out)-maxWritersBefore:]
	}
	return out
}
