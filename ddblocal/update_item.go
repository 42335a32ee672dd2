package ddblocal

import (
	"context"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

func init() { register("UpdateItem", updateItem) }

type updateItemInput struct {
	TableName                           string
	Key                                 wire.RequestItem
	UpdateExpression                    *string
	ConditionExpression                 *string
	ReturnValues                        string
	ReturnValuesOnConditionCheckFailure string
	exprInput
	legacyInput
	rccInput
}

var updateRV = map[string]bool{"": true, "NONE": true, "ALL_OLD": true, "UPDATED_OLD": true, "ALL_NEW": true, "UPDATED_NEW": true}

// updateItem checks an UpdateItem in DynamoDB's order: expression and
// legacy parameters not mixed, the key's values, AttributeUpdates,
// Expected, the expressions, then the table.
func updateItem(s *Server, ctx context.Context, body []byte) (any, error) {
	var in updateItemInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	if err := checkExprMix([]namedParam{{"UpdateExpression", has(in.UpdateExpression)}, {"ConditionExpression", has(in.ConditionExpression)}},
		[]namedParam{{"AttributeUpdates", in.AttributeUpdates != nil}, {"Expected", in.Expected != nil}},
		in.ExpressionAttributeNames != nil, in.ExpressionAttributeValues.Set()); err != nil {
		return nil, err
	}
	key, err := normReq(in.Key)
	if err != nil {
		return nil, err
	}
	w := &writeOp{kind: opUpdate, returnRV: in.ReturnValuesOnConditionCheckFailure == "ALL_OLD"}
	if w.upd, err = in.legacyUpdates(); err != nil {
		return nil, err
	}
	if w.cond, err = in.legacyExpected(); err != nil {
		return nil, err
	}
	p, err := in.params()
	if err != nil {
		return nil, err
	}
	if in.UpdateExpression != nil {
		if w.upd, err = expr.ParseUpdate(*in.UpdateExpression, p); err != nil {
			return nil, err
		}
	}
	if in.ConditionExpression != nil {
		if w.cond, err = expr.ParseCondition(*in.ConditionExpression, p); err != nil {
			return nil, err
		}
	}
	if err := p.CheckUnused(); err != nil {
		return nil, err
	}
	if err := checkRVOnFailure(in.ReturnValuesOnConditionCheckFailure); err != nil {
		return nil, err
	}
	if err := s.keyOp(w, in.TableName, key, &in.legacyInput); err != nil {
		return nil, err
	}
	return s.runSingle(w, in.ReturnValues, in.ReturnConsumedCapacity)
}

// returnAttrs is the Attributes of a write's response per ReturnValues.
func returnAttrs(w *writeOp, rv string, c change) abi.Item {
	var out abi.Item
	switch rv {
	case "ALL_OLD":
		out = c.old
	case "ALL_NEW":
		out = c.new
	case "UPDATED_OLD", "UPDATED_NEW":
		if w.upd == nil {
			return nil
		}
		src := c.old
		if rv == "UPDATED_NEW" {
			src = c.new
		}
		if src == nil {
			return nil
		}
		out = expr.Select(src, w.upd.Paths())
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
