package ddblocal

import (
	"context"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

type transactGetInput struct {
	TransactItems []struct {
		Get *struct {
			TableName            string
			Key                  wire.RequestItem
			ProjectionExpression *string
			exprInput
		}
	}
	rccInput
}

type preparedGet struct {
	t    *table
	key  abi.Item
	proj *projector
}

func transactGetItems(s *Server, ctx context.Context, body []byte) (any, error) {
	var in transactGetInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	var c constraintErrors
	if in.TransactItems == nil {
		c.add("Value null at 'transactItems' failed to satisfy constraint: Member must not be null")
	} else if len(in.TransactItems) == 0 {
		c.add("Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	} else if len(in.TransactItems) > maxTxItems {
		c.add("Value '[...]' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	if err := checkRCC(in.ReturnConsumedCapacity); err != nil {
		return nil, err
	}
	gets := make([]preparedGet, len(in.TransactItems))
	tables := make([]*table, len(gets))
	seen := map[string]bool{}
	for i, ti := range in.TransactItems {
		g := ti.Get
		if g == nil {
			return nil, apierr.Validation("1 validation error detected: Value null at 'transactItems.%d.member.get' failed to satisfy constraint: Member must not be null", i+1)
		}
		var c constraintErrors
		c.checkTableName("tableName", g.TableName)
		if !g.Key.Set() {
			c.add("Value null at 'key' failed to satisfy constraint: Member must not be null")
		}
		if err := c.err(); err != nil {
			return nil, err
		}
		if err := checkExprMix([]namedParam{{"ProjectionExpression", has(g.ProjectionExpression)}}, nil, g.ExpressionAttributeNames != nil, false); err != nil {
			return nil, err
		}
		p, err := g.params()
		if err != nil {
			return nil, err
		}
		proj, err := parseProj(g.ProjectionExpression, nil, p)
		if err != nil {
			return nil, err
		}
		if err := p.CheckUnused(); err != nil {
			return nil, err
		}
		key, err := normReq(g.Key)
		if err != nil {
			return nil, err
		}
		t, err := s.lookup(g.TableName)
		if err != nil {
			return nil, err
		}
		if err := t.validateKey(key); err != nil {
			return nil, err
		}
		id := g.TableName + "\x00" + string(encodeKey(t, key))
		if seen[id] {
			return nil, apierr.Validation(txConflictMsg)
		}
		seen[id] = true
		gets[i] = preparedGet{t: t, key: key, proj: proj}
		tables[i] = t
	}
	unlock := lockTables(tables, false)
	defer unlock()
	resps := make([]map[string]any, len(gets))
	units := map[string]float64{}
	for i, g := range gets {
		if g.t.deleted {
			return nil, errGone
		}
		resps[i] = map[string]any{}
		sz := 0
		if it := g.t.get(g.key); it != nil {
			resps[i]["Item"] = wire.Item(g.proj.apply(it))
			sz = itemSize(it)
		}
		units[g.t.name] += 2 * readUnits(sz, true)
	}
	out := map[string]any{"Responses": resps}
	if cc := consumedList(in.ReturnConsumedCapacity, units); cc != nil {
		out["ConsumedCapacity"] = cc
	}
	return out, nil
}
