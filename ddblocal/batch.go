package ddblocal

import (
	"context"
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
	maxBatchBytes = 16 << 20
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

func sortedNames[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func batchGetItem(s *Server, ctx context.Context, body []byte) (any, error) {
	var in batchGetInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	if len(in.RequestItems) == 0 {
		return nil, apierr.Validation("The requestItems parameter is required for BatchGetItem")
	}
	total := 0
	biggest := ""
	for _, name := range sortedNames(in.RequestItems) {
		ka := in.RequestItems[name]
		if ka == nil || len(ka.Keys) == 0 {
			return nil, apierr.Validation("1 validation error detected: Value at 'requestItems.%s.member.keys' failed to satisfy constraint: Member must have length greater than or equal to 1", name)
		}
		total += len(ka.Keys)
		if biggest == "" || len(ka.Keys) > len(in.RequestItems[biggest].Keys) {
			biggest = name
		}
	}
	if total > maxBatchGet {
		return nil, apierr.Validation("1 validation error detected: Value at 'RequestItems.%s.member.Keys' failed to satisfy constraint: Member must have length less than or equal to 100", biggest)
	}
	type prepared struct {
		t         *table
		keys      []abi.Item
		proj      *projector
		ka        *keysAndAttrs
		throttled map[string]bool // encoded keys left unprocessed
	}
	var preps []prepared
	for _, name := range sortedNames(in.RequestItems) {
		ka := in.RequestItems[name]
		var c constraintErrors
		c.checkTableName("requestItems."+name+".member.tableName", name)
		if err := c.err(); err != nil {
			return nil, err
		}
		p, err := exprInput{ExpressionAttributeNames: ka.ExpressionAttributeNames}.params(has(ka.ProjectionExpression), false)
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
		t, err := s.lookup(name)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		keys := make([]abi.Item, len(ka.Keys))
		for i, raw := range ka.Keys {
			k, err := normReq(raw)
			if err != nil {
				return nil, err
			}
			if err := t.validateKey(k); err != nil {
				return nil, err
			}
			id := string(encodeKey(t, k))
			if seen[id] {
				return nil, apierr.Validation("Provided list of item keys contains duplicates")
			}
			seen[id] = true
			keys[i] = k
		}
		preps = append(preps, prepared{t: t, keys: keys, proj: proj, ka: ka})
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
			if full || p.throttled[string(encodeKey(p.t, k))] {
				left = append(left, wire.Item(k))
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
			if size+sz > maxBatchBytes {
				full = true
				left = append(left, wire.Item(k))
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

func batchWriteItem(s *Server, ctx context.Context, body []byte) (any, error) {
	var in batchWriteInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	if len(in.RequestItems) == 0 {
		return nil, apierr.Validation("The requestItems parameter is required for BatchWriteItem")
	}
	total := 0
	biggest := ""
	for _, name := range sortedNames(in.RequestItems) {
		reqs := in.RequestItems[name]
		if len(reqs) == 0 {
			return nil, apierr.Validation("1 validation error detected: Value at 'requestItems.%s.member' failed to satisfy constraint: Member must have length greater than or equal to 1", name)
		}
		total += len(reqs)
		if biggest == "" || len(reqs) > len(in.RequestItems[biggest]) {
			biggest = name
		}
	}
	if total > maxBatchWrite {
		return nil, apierr.Validation("1 validation error detected: Value '{%s=[...]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]", biggest)
	}
	type prepared struct {
		w   *writeOp
		raw writeRequest
	}
	var ops []prepared
	for _, name := range sortedNames(in.RequestItems) {
		reqs := in.RequestItems[name]
		var c constraintErrors
		c.checkTableName("requestItems."+name+".member.tableName", name)
		if err := c.err(); err != nil {
			return nil, err
		}
		t, err := s.lookup(name)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, r := range reqs {
			if (r.PutRequest == nil) == (r.DeleteRequest == nil) {
				return nil, apierr.Validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
			}
			var w *writeOp
			if r.PutRequest != nil {
				if !r.PutRequest.Item.Set() {
					return nil, apierr.Validation("1 validation error detected: Value null at 'requestItems.%s.member.1.member.putRequest.item' failed to satisfy constraint: Member must not be null", name)
				}
				item, err := normReq(r.PutRequest.Item)
				if err != nil {
					return nil, err
				}
				// In a batch, a wrong-typed table key is the generic schema
				// error (DynamoDB words it so), not PutItem's type mismatch.
				for _, n := range t.key.names() {
					if v, ok := item[n]; ok && v.Kind.String() != t.keyType[n] {
						return nil, apierr.Validation("The provided key element does not match the schema")
					}
				}
				if err := t.rlocked(func() error { return t.validateItem(item) }); err != nil {
					return nil, err
				}
				w = &writeOp{kind: opPut, t: t, key: t.keyOf(item), item: item}
			} else {
				if !r.DeleteRequest.Key.Set() {
					return nil, apierr.Validation("1 validation error detected: Value null at 'requestItems.%s.member.1.member.deleteRequest.key' failed to satisfy constraint: Member must not be null", name)
				}
				key, err := normReq(r.DeleteRequest.Key)
				if err != nil {
					return nil, err
				}
				if err := t.validateKey(key); err != nil {
					return nil, err
				}
				w = &writeOp{kind: opDelete, t: t, key: key}
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
	for i, op := range ops {
		name := op.w.t.name
		if throttled[i] {
			unprocessed[name] = append(unprocessed[name], op.raw)
			continue
		}
		u, err := s.applyWrite(op.w)
		if err != nil {
			return nil, err
		}
		units[name] += u
	}
	out := map[string]any{"UnprocessedItems": unprocessed}
	if cc := consumedList(in.ReturnConsumedCapacity, units); cc != nil {
		out["ConsumedCapacity"] = cc
	}
	return out, nil
}

// applyWrite runs an unconditional write under its table's lock.
func (s *Server) applyWrite(w *writeOp) (float64, error) {
	w.t.mu.Lock()
	defer w.t.mu.Unlock()
	if w.t.deleted {
		return 0, errGone
	}
	c, err := w.eval()
	if err != nil {
		return 0, err
	}
	return writeUnits(c.old, c.new), s.commit([]change{c}, nil)
}
