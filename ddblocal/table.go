package ddblocal

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
)

// keyElem is a KeySchemaElement.
type keyElem struct {
	AttributeName string
	KeyType       string
}

// attrDef is an AttributeDefinition.
type attrDef struct {
	AttributeName string
	AttributeType string
}

// projection is an index Projection.
type projection struct {
	ProjectionType   string   `json:",omitempty"`
	NonKeyAttributes []string `json:",omitempty"`
}

// throughput is a ProvisionedThroughput.
type throughput struct {
	ReadCapacityUnits  int64
	WriteCapacityUnits int64
}

// indexDef is a secondary index definition as stored.
type indexDef struct {
	IndexName             string
	KeySchema             []keyElem
	Projection            projection
	ProvisionedThroughput *throughput `json:",omitempty"`
	Global                bool        `json:"-"`
}

// streamSpec is a StreamSpecification.
type streamSpec struct {
	StreamEnabled  bool
	StreamViewType string `json:",omitempty"`
}

// tableMeta is everything about a table but its items; it is what
// persists in the catalog.
type tableMeta struct {
	TableName            string
	KeySchema            []keyElem
	AttributeDefinitions []attrDef
	GSIs                 []indexDef `json:",omitempty"`
	LSIs                 []indexDef `json:",omitempty"`
	BillingMode          string
	Throughput           *throughput `json:",omitempty"`
	CreatedAt            time.Time
	TableID              string
	Stream               *streamSpec       `json:",omitempty"`
	StreamArn            string            `json:",omitempty"`
	StreamLabel          string            `json:",omitempty"`
	TTLAttr              string            `json:",omitempty"`
	TTLEnabled           bool              `json:",omitempty"`
	TTLChangedAt         time.Time         `json:",omitzero"`
	Tags                 map[string]string `json:",omitempty"` // TagResource, CreateTable's Tags
	// KinesisDestinations are the table's Kinesis streaming destinations
	// (kinesis_dest.go); at most one is ACTIVE.
	KinesisDestinations []kinesisDest `json:",omitempty"`
}

// keyDef names a primary key (of the table or of an index).
type keyDef struct {
	hash, rng string // rng is "" without a sort key
}

func schemaKey(ks []keyElem) keyDef {
	var k keyDef
	for _, e := range ks {
		if e.KeyType == "HASH" {
			k.hash = e.AttributeName
		} else {
			k.rng = e.AttributeName
		}
	}
	return k
}

// names returns the key's attribute names, hash first.
func (k keyDef) names() []string {
	if k.rng == "" {
		return []string{k.hash}
	}
	return []string{k.hash, k.rng}
}

// partition holds the items of one hash key, ordered by range key.
type partition struct {
	hk   abi.Value
	h    uint64 // scanHash(hk)
	rows []abi.Item
	// rks holds rows' range key values, rks[i] of rows[i] (tables with a
	// range key only): find's binary search reads them from one slice
	// instead of a map look-up in every item it passes.
	rks []abi.Value
	// encs holds rows' answer encodings, encs[i] of rows[i]: an *itemEnc
	// made by the first read that asks for it (encodingOf), nil until
	// then and again once the row is replaced. Writers change the slice
	// under the table's write lock; readers set an element atomically
	// under its read lock.
	encs []unsafe.Pointer
}

// itemEnc holds the DynamoDB JSON of a stored item (immutable: a write
// stores a new item), once a read has encoded it whole: a GetItem of the
// same item again writes it without encoding it again.
type itemEnc struct {
	b atomic.Pointer[[]byte]
}

// encodingOf returns the itemEnc of p.rows[i] (t.mu read-locked at least),
// making it when there is none.
func (p *partition) encodingOf(i int) *itemEnc {
	slot := &p.encs[i]
	if e := (*itemEnc)(atomic.LoadPointer(slot)); e != nil {
		return e
	}
	n := new(itemEnc)
	if atomic.CompareAndSwapPointer(slot, nil, unsafe.Pointer(n)) {
		return n
	}
	return (*itemEnc)(atomic.LoadPointer(slot))
}

// table is a table: metadata and items, guarded by mu.
type table struct {
	name    string            // immutable
	key     keyDef            // immutable: a key schema never changes
	keyType map[string]string // immutable: types of the key attributes
	// wmu is read-locked by item writes for their whole course when the
	// server has a store (Server.write), write-locked (lockMeta) before mu
	// by whatever changes the table's metadata or deletes it.
	wmu     sync.RWMutex
	mu      sync.RWMutex
	meta    tableMeta
	types   map[string]string // attribute definitions: name -> S/N/B
	deleted bool
	parts   map[string]*partition
	// The partitions in scan order (cmpScan), rebuilt by scanOrder after
	// writes added or removed partitions (orderDirty, set under mu).
	orderMu    sync.Mutex
	order      []*partition
	orderDirty bool
	count      int64
	size       int64
	idx        map[string]*idxStore  // secondary indexes by name
	stale      map[string]staleEntry // by encoded key; FaultConfig.StaleReads
	life       lifecycle             // a status transition in progress (lifecycle.go)
	readyAt    atomic.Int64          // while CREATING: when it is ACTIVE (Unix ns); 0 when ready
}

func newTable(m tableMeta) *table {
	t := &table{name: m.TableName, key: schemaKey(m.KeySchema), keyType: map[string]string{}, parts: map[string]*partition{}}
	t.setMeta(m)
	for _, n := range t.key.names() {
		t.keyType[n] = t.types[n]
	}
	return t
}

func (t *table) setMeta(m tableMeta) {
	t.meta = m
	t.types = map[string]string{}
	for _, d := range m.AttributeDefinitions {
		t.types[d.AttributeName] = d.AttributeType
	}
	t.buildIndexes()
}

// index returns the named index, or nil.
func (t *table) index(name string) *indexDef {
	for i := range t.meta.GSIs {
		if t.meta.GSIs[i].IndexName == name {
			d := t.meta.GSIs[i]
			d.Global = true
			return &d
		}
	}
	for i := range t.meta.LSIs {
		if t.meta.LSIs[i].IndexName == name {
			d := t.meta.LSIs[i]
			return &d
		}
	}
	return nil
}

// allIndexes returns every index, GSIs first.
func (t *table) allIndexes() []indexDef {
	var out []indexDef
	for _, g := range t.meta.GSIs {
		g.Global = true
		out = append(out, g)
	}
	return append(out, t.meta.LSIs...)
}

// valueKey is a map key for a scalar key value.
func valueKey(v abi.Value) string {
	switch v.Kind {
	case abi.KindB:
		return "B" + string(v.Bytes)
	default:
		return v.Kind.String() + v.Str
	}
}

// cmpVal orders scalar key values of one kind.
func cmpVal(a, b abi.Value) int {
	c, ok := expr.Compare(a, b)
	if !ok {
		return int(a.Kind) - int(b.Kind)
	}
	return c
}

// keyOf returns the primary key attributes of item.
func (t *table) keyOf(item abi.Item) abi.Item {
	k := abi.Item{t.key.hash: item[t.key.hash]}
	if t.key.rng != "" {
		k[t.key.rng] = item[t.key.rng]
	}
	return k
}

// keyCopy returns a deep copy of key's primary key attributes (key may be
// a whole item).
func (t *table) keyCopy(key abi.Item) abi.Item {
	k := abi.Item{t.key.hash: key[t.key.hash].Clone()}
	if t.key.rng != "" {
		k[t.key.rng] = key[t.key.rng].Clone()
	}
	return k
}

// find returns the partition and the position of key in it.
func (t *table) find(key abi.Item) (*partition, int, bool) {
	p := t.parts[valueKey(key[t.key.hash])]
	if p == nil {
		return nil, 0, false
	}
	if t.key.rng == "" {
		return p, 0, len(p.rows) > 0
	}
	rv := key[t.key.rng]
	// a key past the partition's last (a growing sort key: a time, a
	// sequence number) takes one comparison
	n := len(p.rks)
	if n == 0 {
		return p, 0, false
	}
	switch c := cmpVal(p.rks[n-1], rv); {
	case c < 0:
		return p, n, false
	case c == 0:
		return p, n - 1, true
	}
	i := sort.Search(n-1, func(i int) bool { return cmpVal(p.rks[i], rv) >= 0 })
	return p, i, cmpVal(p.rks[i], rv) == 0
}

// get returns the stored item with key (not a copy), or nil.
func (t *table) get(key abi.Item) abi.Item {
	p, i, ok := t.find(key)
	if !ok {
		return nil
	}
	return p.rows[i]
}

// put stores item (replacing the item with its key).
func (t *table) put(item abi.Item) {
	p, i, ok := t.find(item)
	if p == nil {
		hk := item[t.key.hash]
		p = &partition{hk: hk, h: scanHash(hk)}
		t.parts[valueKey(hk)] = p
		t.orderDirty = true
	}
	sz := int64(expr.ItemSize(item))
	if ok {
		t.size -= int64(expr.ItemSize(p.rows[i]))
		t.indexRemove(p.rows[i])
		p.rows[i] = item
		p.encs[i] = nil
		if t.key.rng != "" {
			p.rks[i] = item[t.key.rng]
		}
	} else {
		p.rows = slices.Insert(p.rows, i, item)
		p.encs = slices.Insert(p.encs, i, nil)
		if t.key.rng != "" {
			p.rks = slices.Insert(p.rks, i, item[t.key.rng])
		}
		t.count++
	}
	t.size += sz
	t.indexAdd(item)
}

// remove deletes the item with key; it reports whether one was there.
func (t *table) remove(key abi.Item) bool {
	p, i, ok := t.find(key)
	if !ok {
		return false
	}
	t.size -= int64(expr.ItemSize(p.rows[i]))
	t.count--
	t.indexRemove(p.rows[i])
	p.rows = slices.Delete(p.rows, i, i+1)
	p.encs = slices.Delete(p.encs, i, i+1)
	if t.key.rng != "" {
		p.rks = slices.Delete(p.rks, i, i+1)
	}
	if len(p.rows) == 0 {
		delete(t.parts, valueKey(p.hk))
		t.orderDirty = true
	}
	return true
}

// read returns the stored item with key under the read lock. With stale
// set (an eventually consistent read while FaultConfig.StaleReads is on),
// it may return the item's previous version.
func (t *table) read(key abi.Item, stale bool, now time.Time) (abi.Item, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return nil, errGone
	}
	if stale && len(t.stale) > 0 {
		if e, ok := t.stale[string(encodeKey(t, key))]; ok && now.Before(e.until) {
			return e.old, nil
		}
	}
	return t.get(key), nil
}

// readEnc is read, and the itemEnc of the item when it is a stored row (a
// stale read's older item has none).
func (t *table) readEnc(key abi.Item, stale bool, now time.Time) (abi.Item, *itemEnc, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return nil, nil, errGone
	}
	if stale && len(t.stale) > 0 {
		if e, ok := t.stale[string(encodeKey(t, key))]; ok && now.Before(e.until) {
			return e.old, nil, nil
		}
	}
	p, i, ok := t.find(key)
	if !ok {
		return nil, nil, nil
	}
	return p.rows[i], p.encodingOf(i), nil
}

// staleEntry is an item's version before its last write, which eventually
// consistent reads may still see until the given time.
type staleEntry struct {
	old   abi.Item
	until time.Time
}

// noteStale remembers old as key's previous version until until; the
// caller holds the write lock.
func (t *table) noteStale(key, old abi.Item, now, until time.Time) {
	if t.stale == nil {
		t.stale = map[string]staleEntry{}
	}
	k := string(encodeKey(t, key))
	if e, ok := t.stale[k]; ok && now.Before(e.until) {
		old = e.old // keep the oldest version still visible
	}
	t.stale[k] = staleEntry{old: old, until: until}
	if len(t.stale) > 1024 {
		for k, e := range t.stale {
			if !now.Before(e.until) {
				delete(t.stale, k)
			}
		}
	}
}

// lockMeta write-locks the table against item writes in flight and
// readers, for a change of its metadata; unlockMeta releases it.
func (t *table) lockMeta() {
	t.wmu.Lock()
	t.mu.Lock()
}

func (t *table) unlockMeta() {
	t.mu.Unlock()
	t.wmu.Unlock()
}

// rlocked runs f under the table's read lock (for checks against the
// table's schema made before a write takes the write lock).
func (t *table) rlocked(f func() error) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return f()
}

// scanOrder returns the partitions in scan order. The caller holds t.mu
// (read or write); the order is rebuilt only after partitions came or went.
func (t *table) scanOrder() []*partition {
	t.orderMu.Lock()
	defer t.orderMu.Unlock()
	if t.orderDirty || len(t.order) != len(t.parts) {
		order := make([]*partition, 0, len(t.parts))
		for _, p := range t.parts {
			order = append(order, p)
		}
		sort.Slice(order, func(i, j int) bool { return cmpScan(order[i].h, order[i].hk, order[j].h, order[j].hk) < 0 })
		t.order, t.orderDirty = order, false
	}
	return t.order
}
