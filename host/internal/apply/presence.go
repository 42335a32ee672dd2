package apply

import "slices"

// presence holds, per source instance, the versions a batch (or a repair's
// reads) brings: a gap-fill needs to read only versions missing from it.
// Each instance's versions are a sorted slice, not a map: most instances
// of a batch bring one or a few versions, and a slice of them is one small
// allocation where a map was a header and a group of slots.
type presence map[instanceID]versions

// versions is a set of versions, ascending once sealed.
type versions []uint64

// mark adds version v of instance id. seal must be called before the set
// is read.
func (p presence) mark(id instanceID, v uint64) { p[id] = append(p[id], v) }

// seal sorts and de-duplicates the versions of instance id.
func (p presence) seal(id instanceID) {
	vs := p[id]
	if len(vs) > 1 && !slices.IsSorted(vs) {
		slices.Sort(vs)
	}
	p[id] = slices.Compact(vs)
}

// sealAll seals every instance's versions.
func (p presence) sealAll() {
	for id := range p {
		p.seal(id)
	}
}

// has reports whether v is in the (sealed) set.
func (vs versions) has(v uint64) bool {
	_, ok := slices.BinarySearch(vs, v)
	return ok
}
