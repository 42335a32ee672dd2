package guesttest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dynafold/dynafold/abi"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// Diff compares folded rows with the expected items (key attributes
// included, e.g. built with Row), matching them by key: one line per
// missing, unexpected, failed or different row and attribute, "" when they
// agree. Rows that do not exist after the fold and did not fail are not
// expected to be listed.
func Diff(got []Result, want ...abi.Item) string {
	var lines []string
	byKey := map[string]Result{}
	for _, r := range got {
		byKey[KeyString(r.Key)] = r
	}
	matched := map[string]bool{}
	for i, w := range want {
		r, ok := matchRow(byKey, w)
		if !ok {
			lines = append(lines, fmt.Sprintf("row %d (%s): expected, but no event folds into it", i, render(w)))
			continue
		}
		ks := KeyString(r.Key)
		matched[ks] = true
		switch {
		case r.Err != nil:
			lines = append(lines, fmt.Sprintf("row %s: failed: %v", ks, r.Err))
		case r.Item == nil:
			lines = append(lines, fmt.Sprintf("row %s: expected, but the fold leaves it absent", ks))
		default:
			lines = append(lines, attrDiff(ks, w, r.Item)...)
		}
	}
	for _, r := range got {
		ks := KeyString(r.Key)
		switch {
		case matched[ks]:
		case r.Err != nil:
			lines = append(lines, fmt.Sprintf("row %s: not expected, and failed: %v", ks, r.Err))
		case r.Item != nil:
			lines = append(lines, fmt.Sprintf("row %s: not expected, got %s", ks, render(r.Item)))
		}
	}
	return strings.Join(lines, "\n")
}

// matchRow finds the folded row whose key attributes w carries.
func matchRow(byKey map[string]Result, w abi.Item) (Result, bool) {
	for _, r := range byKey {
		k := abi.Item{}
		for a := range r.Key {
			if v, ok := w[a]; ok {
				k[a] = v
			}
		}
		if len(k) == len(r.Key) && abi.ItemsEqual(k, r.Key) {
			return r, true
		}
	}
	return Result{}, false
}

func attrDiff(key string, want, got abi.Item) []string {
	return abi.DiffItems(key, want, got, renderValue)
}

func render(it abi.Item) string {
	names := make([]string, 0, len(it))
	for k := range it {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + ": " + renderValue(it[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// renderValue shows a value as a reader expects it: strings quoted, numbers
// as their exact text, other kinds as plain Go values.
func renderValue(v abi.Value) string {
	switch v.Kind {
	case abi.KindS:
		return fmt.Sprintf("%q", v.Str)
	case abi.KindN:
		return v.Str
	case abi.KindM:
		return render(v.Map)
	}
	return fmt.Sprintf("%v", guest.Natural(v))
}

// TB is the part of testing.TB Check uses (*testing.T satisfies it).
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Check folds events through d and reports every difference from want
// (items built with Row, or from a fixture) as a test error.
func Check(t TB, d guest.Definition, events []Ev, want ...abi.Item) []Result {
	t.Helper()
	got, err := Fold(d, events...)
	if err != nil {
		t.Fatalf("fold: %v", err)
		return nil
	}
	if diff := Diff(got, want...); diff != "" {
		t.Errorf("rows differ:\n%s", diff)
	}
	return got
}
