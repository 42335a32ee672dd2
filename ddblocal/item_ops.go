package ddblocal

import (
	"context"
	"errors"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

func init() {
	register("GetItem", getItem)
	register("PutItem", putItem)
	register("DeleteItem", deleteItem)
}

type getItemInput struct {
	TableName            string
	Key                  wire.RequestItem
	ConsistentRead       bool
	ProjectionExpression *string
	AttributesToGet      []string
	exprInput
	rccInput
	keyMap abi.Item // Key's map when the envelope reader read it into one of keyMaps
}

func getItem(s *Server, ctx context.Context, body []byte) (any, error) {
	var in getItemInput
	defer func() { putKey(in.keyMap) }() // the key is not kept: the answer is the stored item's
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	return s.getItemRead(&in)
}

// getItemRead serves a GetItem whose input is read.
func (s *Server) getItemRead(in *getItemInput) (any, error) {
	if err := checkExprMix([]namedParam{{"ProjectionExpression", has(in.ProjectionExpression)}},
		[]namedParam{{"AttributesToGet", in.AttributesToGet != nil}}, in.ExpressionAttributeNames != nil, false); err != nil {
		return nil, err
	}
	key, err := normReq(in.Key)
	if err != nil {
		return nil, err
	}
	if err := checkAttrsToGet(in.AttributesToGet); err != nil {
		return nil, err
	}
	p, err := in.params()
	if err != nil {
		return nil, err
	}
	proj, err := parseProj(in.ProjectionExpression, in.AttributesToGet, p)
	if err != nil {
		return nil, err
	}
	if err := p.CheckUnused(); err != nil {
		return nil, err
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := t.validateKey(key); err != nil {
		return nil, err
	}
	if proj != nil && proj.expr != nil {
		if err := t.rlocked(func() error { return t.checkKeyPaths(proj.expr.Paths()) }); err != nil {
			return nil, err
		}
	}
	it, enc, err := t.readEnc(key, s.staleRead(in.ConsistentRead), s.now())
	if err != nil {
		return nil, err
	}
	out := &itemAnswer{}
	if it != nil {
		out.item, out.hasItem = wire.Item(proj.apply(it)), true
		if proj == nil {
			out.enc = enc // the answer is the whole item
		}
	}
	if wantsCapacity(in.ReturnConsumedCapacity) {
		sz := 0
		if it != nil {
			sz = itemSize(it)
		}
		out.cc, out.hasCC = consumed(in.ReturnConsumedCapacity, t.name, "", false, readUnits(sz, in.ConsistentRead)), true
	}
	return out, nil
}

type putItemInput struct {
	TableName                           string
	Item                                wire.RequestItem
	ConditionExpression                 *string
	ReturnValues                        string
	ReturnValuesOnConditionCheckFailure string
	exprInput
	legacyInput
	rccInput
}

// preparePut validates a Put of a transaction.
func (s *Server) preparePut(tableName string, raw wire.RequestItem, cond *string, ei exprInput, rvFail string) (*writeOp, error) {
	var c constraintErrors
	c.checkTableName("tableName", tableName)
	if !raw.Set() {
		c.add("Value null at 'item' failed to satisfy constraint: Member must not be null")
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	if err := checkRVOnFailure(rvFail); err != nil {
		return nil, err
	}
	if err := checkExprMix([]namedParam{{"ConditionExpression", has(cond)}}, nil, ei.ExpressionAttributeNames != nil, ei.ExpressionAttributeValues.Set()); err != nil {
		return nil, err
	}
	p, err := ei.params()
	if err != nil {
		return nil, err
	}
	cd, err := parseCond(cond, p)
	if err != nil {
		return nil, err
	}
	if err := p.CheckUnused(); err != nil {
		return nil, err
	}
	item, err := normReq(raw)
	if err != nil {
		return nil, err
	}
	if err := checkItemSize(item); err != nil {
		return nil, err
	}
	return s.putOp(tableName, item, cd, rvFail)
}

// putOp checks a Put's item against its table and returns the write.
func (s *Server) putOp(tableName string, item abi.Item, cd *expr.Condition, rvFail string) (*writeOp, error) {
	t, err := s.lookup(tableName)
	if err != nil {
		return nil, err
	}
	if err := t.rlocked(func() error { return t.validateItem(item) }); err != nil {
		return nil, err
	}
	return &writeOp{kind: opPut, t: t, key: item, item: item, cond: cd, returnRV: rvFail == "ALL_OLD"}, nil
}

// putItem checks a PutItem in DynamoDB's order: expression and legacy
// parameters not mixed, the item's values, ReturnValues, the item's size,
// Expected, the expressions, then the table.
func putItem(s *Server, ctx context.Context, body []byte) (any, error) {
	var in putItemInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	return s.putItemRead(&in)
}

// putItemRead serves a PutItem whose input is read.
func (s *Server) putItemRead(in *putItemInput) (any, error) {
	if err := checkExprMix([]namedParam{{"ConditionExpression", has(in.ConditionExpression)}},
		[]namedParam{{"Expected", in.Expected != nil}}, in.ExpressionAttributeNames != nil, in.ExpressionAttributeValues.Set()); err != nil {
		return nil, err
	}
	item, err := normReq(in.Item)
	if err != nil {
		return nil, err
	}
	if err := checkPutDeleteRV(in.ReturnValues); err != nil {
		return nil, err
	}
	if err := checkItemSize(item); err != nil {
		return nil, err
	}
	cd, err := in.legacyExpected()
	if err != nil {
		return nil, err
	}
	p, err := in.params()
	if err != nil {
		return nil, err
	}
	if in.ConditionExpression != nil {
		if cd, err = expr.ParseCondition(*in.ConditionExpression, p); err != nil {
			return nil, err
		}
	}
	if err := p.CheckUnused(); err != nil {
		return nil, err
	}
	if err := checkRVOnFailure(in.ReturnValuesOnConditionCheckFailure); err != nil {
		return nil, err
	}
	w, err := s.putOp(in.TableName, item, cd, in.ReturnValuesOnConditionCheckFailure)
	if err != nil {
		return nil, err
	}
	return s.runSingle(w, in.ReturnValues, in.ReturnConsumedCapacity)
}

// runSingle runs one write (Server.write) and builds the response.
func (s *Server) runSingle(w *writeOp, rv, rcc string) (any, error) {
	if err := checkRCC(rcc); err != nil {
		return nil, err
	}
	t := w.t
	var c change
	err := s.write([]*table{t}, []itemRef{{t, w.key}}, nil, func() ([]change, error) {
		if t.deleted {
			return nil, errGone
		}
		var err error
		c, err = w.eval()
		return []change{c}, err
	}, nil)
	if err != nil {
		var cf *condFailure
		if errors.As(err, &cf) {
			return nil, condFailed(cf.old, w.returnRV)
		}
		var h *hoisted
		if errors.As(err, &h) {
			return nil, h.err
		}
		return nil, err
	}
	out := map[string]any{}
	if attrs := returnAttrs(w, rv, c); attrs != nil {
		out["Attributes"] = wire.Item(attrs)
	}
	if wantsCapacity(rcc) {
		out["ConsumedCapacity"] = consumed(rcc, t.name, "", false, writeUnits(c.old, c.new))
	}
	return out, nil
}

type deleteItemInput struct {
	TableName                           string
	Key                                 wire.RequestItem
	ConditionExpression                 *string
	ReturnValues                        string
	ReturnValuesOnConditionCheckFailure string
	exprInput
	legacyInput
	rccInput
}

// prepareKeyOp validates a Delete, ConditionCheck or Update (upd set) of
// a transaction.
func (s *Server) prepareKeyOp(kind opKind, tableName string, raw wire.RequestItem, cond, upd *string, ei exprInput, rvFail string) (*writeOp, error) {
	var c constraintErrors
	c.checkTableName("tableName", tableName)
	if !raw.Set() {
		c.add("Value null at 'key' failed to satisfy constraint: Member must not be null")
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	if err := checkRVOnFailure(rvFail); err != nil {
		return nil, err
	}
	exprs := []namedParam{{"ConditionExpression", has(cond)}}
	if kind == opUpdate {
		exprs = []namedParam{{"UpdateExpression", has(upd)}, {"ConditionExpression", has(cond)}}
	}
	if err := checkExprMix(exprs, nil, ei.ExpressionAttributeNames != nil, ei.ExpressionAttributeValues.Set()); err != nil {
		return nil, err
	}
	p, err := ei.params()
	if err != nil {
		return nil, err
	}
	w := &writeOp{kind: kind, returnRV: rvFail == "ALL_OLD"}
	if upd != nil {
		if w.upd, err = expr.ParseUpdate(*upd, p); err != nil {
			return nil, err
		}
	}
	if w.cond, err = parseCond(cond, p); err != nil {
		return nil, err
	}
	if err := p.CheckUnused(); err != nil {
		return nil, err
	}
	key, err := normReq(raw)
	if err != nil {
		return nil, err
	}
	return w, s.keyOp(w, tableName, key, nil)
}

// keyOp checks a Delete, ConditionCheck or Update's key (and an update's
// paths; legacy's AttributeUpdates when set) against its table and fills
// in w's table and key.
func (s *Server) keyOp(w *writeOp, tableName string, key abi.Item, legacy *legacyInput) error {
	t, err := s.lookup(tableName)
	if err != nil {
		return err
	}
	if err := t.validateKey(key); err != nil {
		return err
	}
	w.t, w.key = t, key
	if legacy != nil && legacy.AttributeUpdates != nil {
		return t.rlocked(func() error { return legacy.checkLegacyUpdateKeys(t) })
	}
	if w.upd != nil {
		return t.rlocked(func() error { return checkUpdatePaths(t, w.upd) })
	}
	return nil
}

// deleteItem checks a DeleteItem in DynamoDB's order: expression and
// legacy parameters not mixed, the key's values, ReturnValues, Expected,
// the expressions, then the table.
func deleteItem(s *Server, ctx context.Context, body []byte) (any, error) {
	var in deleteItemInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	if err := checkExprMix([]namedParam{{"ConditionExpression", has(in.ConditionExpression)}},
		[]namedParam{{"Expected", in.Expected != nil}}, in.ExpressionAttributeNames != nil, in.ExpressionAttributeValues.Set()); err != nil {
		return nil, err
	}
	key, err := normReq(in.Key)
	if err != nil {
		return nil, err
	}
	if err := checkPutDeleteRV(in.ReturnValues); err != nil {
		return nil, err
	}
	w := &writeOp{kind: opDelete, returnRV: in.ReturnValuesOnConditionCheckFailure == "ALL_OLD"}
	if w.cond, err = in.legacyExpected(); err != nil {
		return nil, err
	}
	p, err := in.params()
	if err != nil {
		return nil, err
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
	if err := s.keyOp(w, in.TableName, key, nil); err != nil {
		return nil, err
	}
	return s.runSingle(w, in.ReturnValues, in.ReturnConsumedCapacity)
}

// checkPutDeleteRV checks the ReturnValues of PutItem and DeleteItem: an
// UpdateItem-only value has its own message, anything else the enum error.
func checkPutDeleteRV(rv string) error {
	switch {
	case rv == "" || rv == "NONE" || rv == "ALL_OLD":
		return nil
	case updateRV[rv]:
		return apierr.Validation("ReturnValues can only be ALL_OLD or NONE")
	}
	return apierr.Validation("1 validation error detected: Value '%s' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]", rv)
}
