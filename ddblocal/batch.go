package ddblocal

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"sort"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

func init() {
	register("BatchGetItem", batchGetItem)
	register("BatchWriteItem", batchWriteItem)
}

const (
	maxBatchGet   = 100
	maxBatchWrite = 25
	// batchGetBytes is how much a BatchGetItem answers before it leaves
	// the remaining keys unprocessed: 1 MB and one item's worth, as
	// DynamoDB was measured to (dynalite's tests, run against it); the
	// API reference names 16 MB as the most one call can return.
	batchGetBytes = 1<<20 + maxItemSize - 3
)

type keysAndAttrs struct {
	Keys                     []wire.RequestItem
	ConsistentRead           bool
	ProjectionExpression     *string
	AttributesToGet          []string
	ExpressionAttributeNames map[string]string
}

type batchGetInput struct {
	RequestItems map[string]*keysAndAttrs
	rccInput
}

// keyString identifies a key of a request before its table is known (to
// find duplicates among a batch's keys): equal keys, and only they, give
// the same text. A key of scalar values (every valid one) is written
// without encoding/json: each attribute, in name order, as its name's
// length and name, its type and its value's length and value, after a
// byte no JSON text starts with.
func keyString(k abi.Item) string {
	if len(k) > 2 {
		return keyJSON(k)
	}
	var names [2]string
	n := 0
	for name, v := range k {
		if v.Kind != abi.KindS && v.Kind != abi.KindN && v.Kind != abi.KindB {
			return keyJSON(k)
		}
		names[n] = name
		n++
	}
	if n == 2 && names[1] < names[0] {
		names[0], names[1] = names[1], names[0]
	}
	b := make([]byte, 1, 64)
	for _, name := range names[:n] {
		v := k[name]
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = append(b, byte(v.Kind))
		b = binary.AppendUvarint(b, uint64(len(v.Str)+len(v.Bytes)))
		b = append(append(b, v.Str...), v.Bytes...)
	}
	return string(b)
}

// keyJSON is keyString for a key of other values: its JSON.
func keyJSON(k abi.Item) string {
	b, _ := json.Marshal(wire.Item(k))
	return string(b)
}

func sortedNames[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// batchGetItem checks a BatchGetItem in DynamoDB's order: each table's
// parameters and keys (no more than 100 in all), then each table and its
// keys' schema.
func batchGetItem(s *Server, ctx context.Context, body []byte) (any, error) {
	var in batchGetInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	type prepared struct {
		t         *table
		keys      []abi.Item
		proj      *projector
		ka        *keysAndAttrs
		throttled map[string]bool // encoded keys left unprocessed
	}
	preps := make([]prepared, 0, len(in.RequestItems))
	total := 0
	for _, name := range sortedNames(in.RequestItems) {
		ka := in.RequestItems[name]
		if ka == nil {
			ka = &keysAndAttrs{}
		}
		if err := checkExprMix([]namedParam{{"ProjectionExpression", has(ka.ProjectionExpression)}},
			[]namedParam{{"AttributesToGet", ka.AttributesToGet != nil}}, ka.ExpressionAttributeNames != nil, false); err != nil {
			return nil, err
		}
		if err := checkAttrsToGet(ka.AttributesToGet); err != nil {
			return nil, err
		}
		p, err := exprInput{ExpressionAttributeNames: ka.ExpressionAttributeNames}.params()
		if err != nil {
			return nil, err
		}
		proj, err := parseProj(ka.ProjectionExpression, ka.AttributesToGet, p)
		if err != nil {
			return nil, err
		}
		if err := p.CheckUnused(); err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		keys := make([]abi.Item, len(ka.Keys))
		for i, raw := range ka.Keys {
			k, err := normReq(raw)
			if err != nil {
				return nil, err
			}
			id := keyString(k)
			if seen[id] {
				return nil, apierr.Validation("Provided list of item keys contains duplicates")
			}
			seen[id] = true
			if total++; total > maxBatchGet {
				return nil, apierr.Validation("Too many items requested for the BatchGetItem call")
			}
			keys[i] = k
		}
		preps = append(preps, prepared{keys: keys, proj: proj, ka: ka})
	}
	for i, name := range sortedNames(in.RequestItems) {
		t, err := s.lookup(name)
		if err != nil {
			return nil, err
		}
		for _, k := range preps[i].keys {
			if err := t.validateKey(k); err != nil {
				return nil, err
			}
		}
		preps[i].t = t
	}
	if err := checkRCC(in.ReturnConsumedCapacity); err != nil {
		return nil, err
	}
	units := map[string]float64{}
	// Throttled keys (FaultUnprocessed) are chosen up front.
	for i := range preps {
		p := &preps[i]
		p.throttled = map[string]bool{}
		for _, k := range p.keys {
			if s.faults.unprocessed("BatchGetItem") {
				p.throttled[string(encodeKey(p.t, k))] = true
			}
		}
	}
	responses := map[string][]wire.Item{}
	unprocessed := map[string]any{}
	size, full := 0, false
	for _, p := range preps {
		var got []wire.Item
		var left []wire.Item
		for _, k := range p.keys {
			if p.throttled[string(encodeKey(p.t, k))] {
				left = append(left, wire.Item(k))
				continue
			}
			if full {
				left = append(left, wire.Item(k))
				units[p.t.name] += readUnits(0, p.ka.ConsistentRead)
				continue
			}
			it, err := p.t.read(k, s.staleRead(p.ka.ConsistentRead), s.now())
			if err != nil {
				return nil, err
			}
			sz := 0
			if it != nil {
				sz = itemSize(it)
			}
			if size+sz > batchGetBytes {
				// DynamoDB charges a key it leaves unprocessed one read
				full = true
				left = append(left, wire.Item(k))
				units[p.t.name] += readUnits(0, p.ka.ConsistentRead)
				continue
			}
			size += sz
			units[p.t.name] += readUnits(sz, p.ka.ConsistentRead)
			if it != nil {
				got = append(got, wire.Item(p.proj.apply(it)))
			}
		}
		name := p.t.name
		if got == nil {
			got = []wire.Item{}
		}
		responses[name] = got
		if len(left) > 0 {
			u := map[string]any{"Keys": left}
			if p.ka.ConsistentRead {
				u["ConsistentRead"] = true
			}
			if p.ka.ProjectionExpression != nil {
				u["ProjectionExpression"] = *p.ka.ProjectionExpression
			}
			if p.ka.ExpressionAttributeNames != nil {
				u["ExpressionAttributeNames"] = p.ka.ExpressionAttributeNames
			}
			if p.ka.AttributesToGet != nil {
				u["AttributesToGet"] = p.ka.AttributesToGet
			}
			unprocessed[name] = u
		}
	}
	out := map[string]any{"Responses": responses, "UnprocessedKeys": unprocessed}
	if cc := consumedList(in.ReturnConsumedCapacity, units); cc != nil {
		out["ConsumedCapacity"] = cc
	}
	return out, nil
}

type writeRequest struct {
	PutRequest *struct {
		Item wire.RequestItem
	} `json:",omitempty"`
	DeleteRequest *struct {
		Key wire.RequestItem
	} `json:",omitempty"`
}

type batchWriteInput struct {
	RequestItems map[string][]writeRequest
	rccInput
}

// batchWriteItem checks a BatchWriteItem in DynamoDB's order: each
// request's values (and an item's size), then each table and its
// requests' schema and keys.
func batchWriteItem(s *Server, ctx context.Context, body []byte) (any, error) {
	var in batchWriteInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	type prepared struct {
		w   *writeOp
		raw writeRequest
	}
	total, biggest := 0, ""
	vals := map[string][]abi.Item{} // the item or key of each request
	for _, name := range sortedNames(in.RequestItems) {
		reqs := in.RequestItems[name]
		for _, r := range reqs {
			if (r.PutRequest == nil) == (r.DeleteRequest == nil) {
				return nil, apierr.Validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
			}
		}
		for _, r := range reqs {
			var v abi.Item
			var err error
			if r.PutRequest != nil {
				if v, err = normReq(r.PutRequest.Item); err != nil {
					return nil, err
				}
				if err := checkItemSize(v); err != nil {
					return nil, err
				}
			} else if v, err = normReq(r.DeleteRequest.Key); err != nil {
				return nil, err
			}
			vals[name] = append(vals[name], v)
		}
		total += len(reqs)
		if biggest == "" || len(reqs) > len(in.RequestItems[biggest]) {
			biggest = name
		}
	}
	if total > maxBatchWrite {
		return nil, apierr.Validation("1 validation error detected: Value '{%s=[...]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]", biggest)
	}
	var ops []prepared
	for _, name := range sortedNames(in.RequestItems) {
		t, err := s.lookup(name)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for i, r := range in.RequestItems[name] {
			v := vals[name][i]
			var w *writeOp
			if r.PutRequest != nil {
				// In a batch, a missing or wrong-typed table key is the
				// generic schema error (DynamoDB words it so), not
				// PutItem's.
				for _, n := range t.key.names() {
					if x, ok := v[n]; !ok || x.Kind.String() != t.keyType[n] {
						return nil, apierr.Validation("The provided key element does not match the schema")
					}
				}
				if err := t.rlocked(func() error { return t.validateItem(v) }); err != nil {
					return nil, err
				}
				w = &writeOp{kind: opPut, t: t, key: v, item: v}
			} else {
				if err := t.validateKey(v); err != nil {
					return nil, err
				}
				w = &writeOp{kind: opDelete, t: t, key: v}
			}
			id := string(encodeKey(t, w.key))
			if seen[id] {
				return nil, apierr.Validation("Provided list of item keys contains duplicates")
			}
			seen[id] = true
			ops = append(ops, prepared{w: w, raw: r})
		}
	}
	if err := checkRCC(in.ReturnConsumedCapacity); err != nil {
		return nil, err
	}
	throttled := make([]bool, len(ops))
	for i := range ops {
		throttled[i] = s.faults.unprocessed("BatchWriteItem")
	}
	unprocessed := map[string][]writeRequest{}
	units := map[string]float64{}
	var ws []*writeOp
	for i, op := range ops {
		if throttled[i] {
			unprocessed[op.w.t.name] = append(unprocessed[op.w.t.name], op.raw)
			continue
		}
		ws = append(ws, op.w)
	}
	cs, err := s.applyWrites(ws)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		units[c.t.name] += writeUnits(c.old, c.new)
	}
	out := map[string]any{"UnprocessedItems": unprocessed}
	if cc := consumedList(in.ReturnConsumedCapacity, units); cc != nil {
		out["ConsumedCapacity"] = cc
	}
	return out, nil
}

// applyWrites runs a batch's unconditional writes as one Server.write
// (their items are distinct): with a data directory, one store commit.
func (s *Server) applyWrites(ws []*writeOp) ([]change, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	ts := make([]*table, len(ws))
	refs := make([]itemRef, len(ws))
	for i, w := range ws {
		ts[i], refs[i] = w.t, itemRef{w.t, w.key}
	}
	var cs []change
	err := s.write(ts, refs, nil, func() ([]change, error) {
		cs = cs[:0]
		for _, w := range ws {
			if w.t.deleted {
				return nil, errGone
			}
			c, err := w.eval()
			if err != nil {
				return nil, err
			}
			cs = append(cs, c)
		}
		return cs, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return cs, nil
}
