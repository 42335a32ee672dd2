package dynamo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/backoff"
	"github.com/dynafold/dynafold/internal/ddbclient"
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
func (d *DB) BatchGetItem(ctx context.Context, table string, keys []abi.Item) ([]abi.Item, error) {
	out := make([]abi.Item, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	// Unique keys, each with the positions that asked for it.
	type want struct {
		key       abi.Item
		positions []int
	}
	index := map[string]*want{}
	var order []string
	for i, k := range keys {
		id, err := keyID(k, nil)
		if err != nil {
			return nil, fmt.Errorf("dynamo BatchGetItem key %d: %w", i, err)
		}
		w, ok := index[id]
		if !ok {
			w = &want{key: k}
			index[id] = w
			order = append(order, id)
		}
		w.positions = append(w.positions, i)
	}
	for start := 0; start < len(order); start += batchGetLimit {
		end := min(start+batchGetLimit, len(order))
		chunk := make([]abi.Item, 0, end-start)
		for _, id := range order[start:end] {
			chunk = append(chunk, index[id].key)
		}
		items, err := d.batchGetChunk(ctx, table, chunk)
		if err != nil {
			return nil, err
		}
		// Every key of a table has the table's key attributes, so an item's
		// key is its projection on the first key's names.
		for _, it := range items {
			id, err := keyID(it, chunk[0])
			if err != nil {
				continue
			}
			if w, ok := index[id]; ok {
				for _, p := range w.positions {
					out[p] = it
				}
			}
		}
	}
	return out, nil
}

func (d *DB) batchGetChunk(ctx context.Context, table string, keys []abi.Item) ([]abi.Item, error) {
	if d.wire != nil {
		return d.wireBatchGetChunk(ctx, table, keys)
	}
	req := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		av, err := ddbclient.ToAttributeMap(k)
		if err != nil {
			return nil, fmt.Errorf("dynamo BatchGetItem key: %w", err)
		}
		req[i] = av
	}
	var items []abi.Item
	stalls := 0 // consecutive rounds that returned nothing
	for round := 0; len(req) > 0; round++ {
		if round > 0 {
			if stalls > maxStalledRounds {
				return nil, fmt.Errorf("dynamo BatchGetItem: %d keys of table %s: %w", len(req), table, ErrUnprocessedKeys)
			}
			if err := sleepJitter(ctx, stalls+1); err != nil {
				return nil, err
			}
		}
		out, err := d.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{
				table: {Keys: req, ConsistentRead: aws.Bool(true)},
			},
		}, d.opt)
		if err != nil {
			return nil, mapError("BatchGetItem on "+table, err)
		}
		for _, raw := range out.Responses[table] {
			it, err := ddbclient.FromAttributeMap(raw)
			if err != nil {
				return nil, fmt.Errorf("dynamo BatchGetItem: %w", err)
			}
			items = append(items, it)
		}
		next := out.UnprocessedKeys[table].Keys
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

// keyID is a canonical text of a key: of item's attributes named in like (or
// all of item's when like is nil). Numbers are normalised, so "1.0" and "1"
// are the same key, as they are to DynamoDB.
func keyID(item abi.Item, like abi.Item) (string, error) {
	var arr [4]string
	names := arr[:0]
	if like == nil {
		like = item
	}
	size := 0
	for n := range like {
		names = append(names, n)
		size += len(n) + 8
		if v, ok := item[n]; ok {
			size += len(v.Str) + 2*len(v.Bytes)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	b.Grow(size)
	for _, n := range names {
		v, ok := item[n]
		if !ok {
			return "", fmt.Errorf("key attribute %q missing", n)
		}
		b.WriteString(n)
		b.WriteByte(0)
		b.WriteString(v.Kind.String())
		b.WriteByte(0)
		switch v.Kind {
		case abi.KindS:
			b.WriteString(v.Str)
		case abi.KindN:
			if plainInt(v.Str) {
				b.WriteString(v.Str) // already as RatString writes it
				break
			}
			r, ok := new(big.Rat).SetString(v.Str)
			if !ok {
				return "", fmt.Errorf("key attribute %q: bad number %q", n, v.Str)
			}
			b.WriteString(r.RatString())
		case abi.KindB:
			b.WriteString(hex.EncodeToString(v.Bytes))
		default:
			return "", fmt.Errorf("key attribute %q has type %s; keys are S, N or B", n, v.Kind)
		}
		b.WriteByte(0)
	}
	return b.String(), nil
}

// plainInt reports whether s is an integer in its shortest form ("0",
// "-12", never "-0", "007" or "1e3"): the text big.Rat's RatString gives it.
func plainInt(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || len(d) > 30 || (d[0] == '0' && (len(d) > 1 || len(s) > 1)) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// wireBatchGetChunk is batchGetChunk on the wire path.
func (d *DB) wireBatchGetChunk(ctx context.Context, table string, req []abi.Item) ([]abi.Item, error) {
	var items []abi.Item
	stalls := 0 // consecutive rounds that returned nothing
	for round := 0; len(req) > 0; round++ {
		if round > 0 {
			if stalls > maxStalledRounds {
				return nil, fmt.Errorf("dynamo BatchGetItem: %d keys of table %s: %w", len(req), table, ErrUnprocessedKeys)
			}
			if err := sleepJitter(ctx, stalls+1); err != nil {
				return nil, err
			}
		}
		got, next, err := d.wireBatchGet(ctx, table, req)
		if err != nil {
			return nil, err
		}
		items = append(items, got...)
		if len(next) >= len(req) {
			stalls++
		} else {
			stalls = 0
		}
		req = next
	}
	return items, nil
}
