package ddblocal

import (
	"context"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
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

func updateItem(s *Server, ctx context.Context, body []byte) (any, error) {
	var in updateItemInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	if err := in.legacyInput.check(); err != nil {
		return nil, err
	}
	if !updateRV[in.ReturnValues] {
		return nil, apierr.Validation("1 validation error detected: Value '%s' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]", in.ReturnValues)
	}
	w, err := s.prepareKeyOp(opUpdate, in.TableName, in.Key, in.ConditionExpression, in.UpdateExpression, in.exprInput, in.ReturnValuesOnConditionCheckFailure)
	if err != nil {
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
