package abi

import "sort"

// appendSorted appends the entries of it, names in ascending byte order so
// that equal items encode equally (see ABI.md, "Value").
func appendSorted(dst []byte, it Item) []byte {
	if len(it) > 8 {
		return appendSortedLarge(dst, it)
	}
	// Most items are small: their names, and the text of their S and N
	// values, are taken in one pass over the map and their indices sorted
	// by name; only other kinds are looked up again.
	var keys, strs [8]string
	var kinds [8]Kind
	n := 0
	for k, v := range it {
		keys[n], kinds[n], strs[n] = k, v.Kind, v.Str
		n++
	}
	var order [8]uint8
	for i := 0; i < n; i++ { // insertion sort
		order[i] = uint8(i)
		for j := i; j > 0 && keys[order[j]] < keys[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for _, i := range order[:n] {
		dst = AppendString(dst, keys[i])
		if k := kinds[i]; k == KindS || k == KindN {
			dst = AppendString(append(dst, byte(k)), strs[i])
		} else {
			dst = AppendValue(dst, it[keys[i]])
		}
	}
	return dst
}

func appendSortedLarge(dst []byte, it Item) []byte {
	var buf [16]string
	keys := buf[:0]
	for k := range it {
		keys = append(keys, k)
	}
	if len(keys) <= 16 {
		for i := 1; i < len(keys); i++ { // insertion sort: items are small
			for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
				keys[j], keys[j-1] = keys[j-1], keys[j]
			}
		}
	} else {
		sort.Strings(keys)
	}
	for _, k := range keys {
		dst = AppendString(dst, k)
		dst = AppendValue(dst, it[k])
	}
	return dst
}
