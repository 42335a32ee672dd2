package ddblocal

import (
	"hash/maphash"
	"slices"
	"sync"

	"github.com/dynafold/dynafold/abi"
)

// keyStripes is the number of locks of a keyLocks; two keys share a lock
// when their hashes meet modulo it, which only costs them concurrency.
const keyStripes = 4096

// keyLocks is a striped table of item locks: every write of an item to a
// persistent store holds its key's lock from its condition's evaluation to
// its in-memory apply, so a write to a key waits for the one before it to
// be stored and applied, while writes to other keys proceed (their store
// commits grouped, groupcommit.go).
type keyLocks struct {
	seed    maphash.Seed
	stripes [keyStripes]sync.Mutex
}

func newKeyLocks() *keyLocks { return &keyLocks{seed: maphash.MakeSeed()} }

// itemRef names an item to lock: its table and its primary key.
type itemRef struct {
	t   *table
	key abi.Item
}

// stripe returns the lock index of an item.
func (k *keyLocks) stripe(r itemRef) int {
	var h maphash.Hash
	h.SetSeed(k.seed)
	_, _ = h.WriteString(r.t.name)
	_ = h.WriteByte(0)
	_, _ = h.Write(encodeKey(r.t, r.key))
	return int(h.Sum64() % keyStripes)
}

// lock takes the locks of refs, each once, in index order (so two writers
// of overlapping keys never deadlock), and returns the unlock function.
func (k *keyLocks) lock(refs []itemRef) func() {
	if len(refs) == 1 {
		m := &k.stripes[k.stripe(refs[0])]
		m.Lock()
		return m.Unlock
	}
	idx := make([]int, len(refs))
	for i, r := range refs {
		idx[i] = k.stripe(r)
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		k.stripes[i].Lock()
	}
	return func() {
		for j := len(idx) - 1; j >= 0; j-- {
			k.stripes[idx[j]].Unlock()
		}
	}
}
