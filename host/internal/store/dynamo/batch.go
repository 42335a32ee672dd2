package dynamo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/backoff"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/keys"
)

// batchGetLimit is DynamoDB's maximum number of keys per BatchGetItem.
const batchGetLimit = 100

// maxStalledRounds bounds the consecutive retries of unprocessed keys that
// make no progress; rounds that read some keys do not count against it.
const maxStalledRounds = 8

// ErrUnprocessedKeys is matched when BatchGetItem still had unprocessed keys
// after every retry.
var ErrUnprocessedKeys = errors.New("batch get: keys still unprocessed after retries")

// BatchGetItem implements store.DB: keys are de-duplicated, read consistently
// in chunks of 100, unprocessed keys retried with a short jittered backoff,
// and the result is in the order of keys, nil where an item is absent.
//
// The answered items are put back in the order of the keys by their key
// attributes' values, compared in place: the keys sorted once by them,
// each item found by a binary search (no map, no text per key). Keys whose
// attribute names are not all the first key's (a request DynamoDB
// refuses) are matched by a canonical text instead (batchGetByID).
func (d *DB) BatchGetItem(ctx context.Context, table string, keys []abi.Item) ([]abi.Item, error) {
	out := make([]abi.Item, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	sc := scratchPool.Get().(*batchScratch)
	defer sc.put()
	names := keyNames(sc.names[:0], keys[0])
	sc.names = names
	w := len(names)
	// parts[i*w:(i+1)*w] is key i's attributes in the order of names.
	parts := slices.Grow(sc.parts[:0], w*len(keys))
	defer func() { sc.parts = parts }()
	for i, k := range keys {
		if len(k) != w {
			return d.batchGetByID(ctx, table, keys)
		}
		var err error
		var ok bool
		if parts, ok, err = appendKeyParts(parts, k, names); err != nil {
			return nil, fmt.Errorf("dynamo BatchGetItem key %d: %w", i, err)
		} else if !ok {
			return d.batchGetByID(ctx, table, keys)
		}
	}
	// order: the keys' positions sorted by their parts, equal keys by
	// position; firsts: the first position of each distinct key, in the
	// order of keys (the order they are asked in).
	if cap(sc.idx) < 2*len(keys) {
		sc.idx = make([]int32, 2*len(keys))
	}
	idx := sc.idx[:2*len(keys)]
	order, firsts := idx[:len(keys)], idx[len(keys):len(keys)]
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := compareParts(parts[int(a)*w:int(a+1)*w], parts[int(b)*w:int(b+1)*w]); c != 0 {
			return c
		}
		return int(a - b)
	})
	for j, p := range order {
		if j == 0 || compareParts(parts[int(order[j-1])*w:int(order[j-1]+1)*w], parts[int(p)*w:int(p+1)*w]) != 0 {
			firsts = append(firsts, p)
		}
	}
	if len(firsts) < len(keys) {
		slices.Sort(firsts)
	}
	chunk := slices.Grow(sc.chunk[:0], min(len(firsts), batchGetLimit))
	sc.chunk = chunk
	var got [4]keyPart
	for start := 0; start < len(firsts); start += batchGetLimit {
		end := min(start+batchGetLimit, len(firsts))
		chunk = chunk[:0]
		for _, i := range firsts[start:end] {
			chunk = append(chunk, keys[i])
		}
		items, err := d.batchGetChunk(ctx, table, chunk, names)
		if err != nil {
			return nil, err
		}
		// Every key of a table has the table's key attributes, so an item's
		// key is its projection on the keys' names.
		for _, it := range items {
			ip, ok, err := appendKeyParts(got[:0], it, names)
			if err != nil || !ok {
				continue
			}
			j, _ := slices.BinarySearchFunc(order, ip, func(p int32, ip []keyPart) int {
				return compareParts(parts[int(p)*w:int(p+1)*w], ip)
			})
			for ; j < len(order) && compareParts(parts[int(order[j])*w:int(order[j]+1)*w], ip) == 0; j++ {
				out[order[j]] = it
			}
		}
	}
	return out, nil
}

// batchScratch is what a BatchGetItem call works in, kept for the next
// call (scratchPool): its keys' names and values, the positions sorted,
// the chunk of keys sent.
type batchScratch struct {
	names []string
	parts []keyPart
	idx   []int32
	chunk []abi.Item
}

var scratchPool = sync.Pool{New: func() any { return new(batchScratch) }}

// put clears sc (it keeps no key or item of the call) and pools it, unless
// a call of many keys made it large.
func (sc *batchScratch) put() {
	clear(sc.names[:cap(sc.names)])
	clear(sc.parts[:cap(sc.parts)])
	clear(sc.chunk[:cap(sc.chunk)])
	if cap(sc.parts) <= 4*batchGetLimit && cap(sc.idx) <= 4*batchGetLimit {
		scratchPool.Put(sc)
	}
}

// keyPart is one attribute of a key as BatchGetItem compares it: its
// type, and its text (a number's canonical form, a binary's bytes).
type keyPart struct {
	kind abi.Kind
	text string
}

// keyNames appends the attribute names of key to names, sorted.
func keyNames(names []string, key abi.Item) []string {
	for n := range key {
		names = append(names, n)
	}
	if len(names) == 2 { // the usual key: no sort's set-up
		if names[1] < names[0] {
			names[0], names[1] = names[1], names[0]
		}
		return names
	}
	slices.Sort(names)
	return names
}

// appendKeyParts appends the parts of item's attributes named in names to
// parts: ok false when item lacks one of them; an error when one is not a
// key's type or not a number.
func appendKeyParts(parts []keyPart, item abi.Item, names []string) (_ []keyPart, ok bool, err error) {
	for _, n := range names {
		v, ok := item[n]
		if !ok {
			return parts, false, nil
		}
		p := keyPart{kind: v.Kind}
		switch v.Kind {
		case abi.KindS:
			p.text = v.Str
		case abi.KindN:
			var number bool
			if p.text, number = keys.CanonicalNumber(v.Str); !number {
				return parts, false, fmt.Errorf("key attribute %q: bad number %q", n, v.Str)
			}
		case abi.KindB:
			p.text = string(v.Bytes)
		default:
			return parts, false, fmt.Errorf("key attribute %q has type %s; keys are S, N or B", n, v.Kind)
		}
		parts = append(parts, p)
	}
	return parts, true, nil
}

// compareParts orders two keys' parts: by type, then text, attribute by
// attribute.
func compareParts(a, b []keyPart) int {
	for i := range a {
		if a[i].kind != b[i].kind {
			return int(a[i].kind) - int(b[i].kind)
		}
		if c := strings.Compare(a[i].text, b[i].text); c != 0 {
			return c
		}
	}
	return 0
}

// batchGetByID is BatchGetItem for keys whose attribute names differ from
// one key to another: each key matched by a canonical text of it
// (appendKeyID) through a map.
func (d *DB) batchGetByID(ctx context.Context, table string, keys []abi.Item) ([]abi.Item, error) {
	out := make([]abi.Item, len(keys))
	// Unique keys, each with the positions that asked for it.
	type want struct {
		key   abi.Item
		first int   // the first position that asked for it
		more  []int // the others
	}
	// The keys' ids, end to end in one string: ends[i] is where key i's
	// ends (one allocation for all the map's keys, not one each).
	id := make([]byte, 0, 32*len(keys))
	ends := make([]int, len(keys))
	for i, k := range keys {
		var err error
		if id, err = appendKeyID(id, k, nil); err != nil {
			return nil, fmt.Errorf("dynamo BatchGetItem key %d: %w", i, err)
		}
		ends[i] = len(id)
	}
	ids := string(id)
	index := make(map[string]int, len(keys)) // key id -> wants
	wants := make([]want, 0, len(keys))
	for i, k := range keys {
		kid := ids[prevEnd(ends, i):ends[i]]
		if j, ok := index[kid]; ok {
			wants[j].more = append(wants[j].more, i)
			continue
		}
		index[kid] = len(wants)
		wants = append(wants, want{key: k, first: i})
	}
	chunk := make([]abi.Item, 0, min(len(wants), batchGetLimit))
	for start := 0; start < len(wants); start += batchGetLimit {
		end := min(start+batchGetLimit, len(wants))
		chunk = chunk[:0]
		for _, w := range wants[start:end] {
			chunk = append(chunk, w.key)
		}
		items, err := d.batchGetChunk(ctx, table, chunk, nil)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if id, err = appendKeyID(id[:0], it, chunk[0]); err != nil {
				continue
			}
			if j, ok := index[string(id)]; ok { // no allocation for the lookup
				out[wants[j].first] = it
				for _, p := range wants[j].more {
					out[p] = it
				}
			}
		}
	}
	return out, nil
}

// prevEnd is where the id of key i starts: where key i-1's ends.
func prevEnd(ends []int, i int) int {
	if i == 0 {
		return 0
	}
	return ends[i-1]
}

// batchGetChunk reads up to 100 distinct keys, in rounds until none is
// left unprocessed. names, when set, are the keys' attribute names,
// sorted (the wire path writes the keys in their order).
func (d *DB) batchGetChunk(ctx context.Context, table string, keys []abi.Item, names []string) ([]abi.Item, error) {
	if d.wire != nil {
		return d.wireBatchGetChunk(ctx, table, keys, names)
	}
	req := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		av, err := ddbclient.ToAttributeMap(k)
		if err != nil {
			return nil, fmt.Errorf("dynamo BatchGetItem key: %w", err)
		}
		req[i] = av
	}
	return unprocessedRounds(ctx, table, req, func(req []map[string]types.AttributeValue) ([]abi.Item, []map[string]types.AttributeValue, error) {
		out, err := d.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{
				table: {Keys: req, ConsistentRead: aws.Bool(true)},
			},
		}, d.opt)
		if err != nil {
			return nil, nil, mapError("BatchGetItem on "+table, err)
		}
		items := make([]abi.Item, 0, len(out.Responses[table]))
		for _, raw := range out.Responses[table] {
			it, err := ddbclient.FromAttributeMap(raw)
			if err != nil {
				return nil, nil, fmt.Errorf("dynamo BatchGetItem: %w", err)
			}
			items = append(items, it)
		}
		return items, out.UnprocessedKeys[table].Keys, nil
	})
}

// unprocessedRounds runs round on req, then on the keys each round left
// unprocessed, until none is left: a jittered wait before each further
// round growing with the rounds that made no progress, and
// ErrUnprocessedKeys after maxStalledRounds of them. It returns the items
// of every round.
func unprocessedRounds[K any](ctx context.Context, table string, req []K, round func([]K) ([]abi.Item, []K, error)) ([]abi.Item, error) {
	var items []abi.Item
	stalls := 0 // consecutive rounds that returned nothing
	for r := 0; len(req) > 0; r++ {
		if r > 0 {
			if stalls > maxStalledRounds {
				return nil, fmt.Errorf("dynamo BatchGetItem: %d keys of table %s: %w", len(req), table, ErrUnprocessedKeys)
			}
			if err := sleepJitter(ctx, stalls+1); err != nil {
				return nil, err
			}
		}
		got, next, err := round(req)
		if err != nil {
			return nil, err
		}
		if items == nil {
			items = got // the first round's: no copy
		} else {
			items = append(items, got...)
		}
		if len(next) >= len(req) {
			stalls++
		} else {
			stalls = 0
		}
		req = next
	}
	return items, nil
}

// sleepJitter waits a jittered delay growing with the rounds that made no
// progress: 10 ms doubling up to 500 ms.
func sleepJitter(ctx context.Context, n int) error {
	return backoff.Policy{Base: 10 * time.Millisecond, Max: 500 * time.Millisecond}.Wait(ctx, n)
}

// appendKeyID appends a canonical text of a key to b: of item's attributes
// named in like (or all of item's when like is nil). Numbers are
// normalised, so "1.0" and "1" are the same key, as they are to DynamoDB.
func appendKeyID(b []byte, item abi.Item, like abi.Item) ([]byte, error) {
	var arr [4]string
	names := arr[:0]
	if like == nil {
		like = item
	}
	for n := range like {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		v, ok := item[n]
		if !ok {
			return b, fmt.Errorf("key attribute %q missing", n)
		}
		b = append(b, n...)
		b = append(b, 0)
		b = append(b, v.Kind.String()...)
		b = append(b, 0)
		switch v.Kind {
		case abi.KindS:
			b = append(b, v.Str...)
		case abi.KindN:
			c, ok := keys.CanonicalNumber(v.Str)
			if !ok {
				return b, fmt.Errorf("key attribute %q: bad number %q", n, v.Str)
			}
			b = append(b, c...)
		case abi.KindB:
			b = hex.AppendEncode(b, v.Bytes)
		default:
			return b, fmt.Errorf("key attribute %q has type %s; keys are S, N or B", n, v.Kind)
		}
		b = append(b, 0)
	}
	return b, nil
}

// wireBatchGetChunk is batchGetChunk on the wire path.
func (d *DB) wireBatchGetChunk(ctx context.Context, table string, req []abi.Item, names []string) ([]abi.Item, error) {
	return unprocessedRounds(ctx, table, req, func(req []abi.Item) ([]abi.Item, []abi.Item, error) {
		return d.wireBatchGet(ctx, table, req, names)
	})
}
