package expr

import (
	"errors"
	"testing"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// fuzzCheck asserts that a parse either succeeds or fails with a
// ValidationException (never a panic, never another error).
func fuzzCheck(t *testing.T, err error) {
	if err == nil {
		return
	}
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != "ValidationException" {
		t.Fatalf("unexpected error %v", err)
	}
}

func FuzzParseCondition(f *testing.F) {
	for _, s := range []string{
		"a = :n1", "attribute_exists(#s) AND NOT (a < :n5 OR size(l) > :n2)", "a BETWEEN :n1 AND :n10",
		"a IN (:n1, :n2)", "begins_with(s, :he)", "contains(ss, :sa)", "((a = :n1))", "m.n.d[3] <> :s",
		"attribute_type(a, :typeN)", "a = :n1 AND",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCondition(s, testParams())
		fuzzCheck(t, err)
		if err == nil {
			if _, err := c.Eval(testItem()); err != nil {
				t.Fatal(err)
			}
			_, _ = c.Eval(nil)
		}
		_, err = ParseFilter(s, testParams())
		fuzzCheck(t, err)
	})
}

func FuzzParseUpdate(f *testing.F) {
	for _, s := range []string{
		"SET a = :n1", "SET a = a + :n2, b = list_append(if_not_exists(l, :empty), :l) REMOVE c[1], d.e",
		"ADD ns :ns DELETE ss :ss", "SET l[10] = :s", "REMOVE l[0], l[2]", "SET a = (a - :n1)", "set #m.#a = :m",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseUpdate(s, testParams())
		fuzzCheck(t, err)
		if err == nil {
			_, err := u.Apply(testItem())
			fuzzCheck(t, err)
			_, err = u.Apply(nil)
			fuzzCheck(t, err)
			_ = u.Paths()
		}
	})
}

func FuzzParseProjection(f *testing.F) {
	for _, s := range []string{"a", "a, b.c, l[2].d", "#s, #m.k", "m.n.d, m.k", "a[0][1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseProjection(s, testParams())
		fuzzCheck(t, err)
		if err == nil {
			_ = p.Apply(testItem())
		}
	})
}

func FuzzParseKeyCondition(f *testing.F) {
	for _, s := range []string{
		"p = :s", "p = :s AND c BETWEEN :n1 AND :n2", "begins_with(c, :he) and p = :s", ":n1 < c AND p = :s",
		"((c=:n1) AND (p=:s))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKeyCondition(s, testParams())
		fuzzCheck(t, err)
		if err == nil {
			err := k.Validate("p", "c", map[string]string{"p": "S", "c": "N"})
			fuzzCheck(t, err)
			if err == nil && k.Range != nil {
				_ = k.Range.Match(testItem()["a"])
			}
		}
	})
}
