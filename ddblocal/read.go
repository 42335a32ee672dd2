package ddblocal

import (
	"iter"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

const pageBytes = 1 << 20

// readInput is what Query and Scan share.
type readInput struct {
	TableName              string
	IndexName              *string
	Select                 string
	Limit                  *int
	ConsistentRead         bool
	ExclusiveStartKey      wire.RequestItem
	ProjectionExpression   *string
	AttributesToGet        []string
	FilterExpression       *string
	ReturnConsumedCapacity string
	isQuery                bool
	exprInput
	legacyInput
}

// reader is a prepared Query or Scan.
type reader struct {
	rcc        string
	consistent bool
	src        source
	sel        string
	limit      int
	esk        abi.Item
	filter     *expr.Condition
	proj       *projector
}

var selects = map[string]bool{"": true, "ALL_ATTRIBUTES": true, "ALL_PROJECTED_ATTRIBUTES": true, "SPECIFIC_ATTRIBUTES": true, "COUNT": true}

// prepareRead validates the shared parameters; keyCond is parsed by the
// caller with the same Params (p).
func (s *Server) prepareRead(in *readInput, usesExpr bool) (*reader, *expr.Params, error) {
	var c constraintErrors
	c.checkTableName("tableName", in.TableName)
	if in.IndexName != nil {
		c.checkName("indexName", *in.IndexName)
	}
	if in.Limit != nil && *in.Limit < 1 {
		// Words captured from DynamoDB: Query leaves the value out and
		// capitalises the field, Scan does not.
		if in.isQuery {
			c.add("Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1")
		} else {
			c.add("Value '" + itoa(*in.Limit) + "' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1")
		}
	}
	if !selects[in.Select] {
		c.add("Value '" + in.Select + "' at 'select' failed to satisfy constraint: Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]")
	}
	if err := c.err(); err != nil {
		return nil, nil, err
	}
	if err := in.legacyInput.check(); err != nil {
		return nil, nil, err
	}
	hasProj := in.ProjectionExpression != nil || in.AttributesToGet != nil
	switch in.Select {
	case "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES", "COUNT":
		what := in.Select
		if what == "COUNT" {
			what = "only the Count"
		}
		prefix := "" // Query's words carry the envelope, Scan's do not
		if in.isQuery {
			prefix = "1 validation error detected: "
		}
		if in.ProjectionExpression != nil {
			return nil, nil, apierr.Validation("%sCannot specify the ProjectionExpression when choosing to get %s", prefix, what)
		}
		if in.AttributesToGet != nil {
			return nil, nil, apierr.Validation("%sCannot specify the AttributesToGet when choosing to get %s", prefix, what)
		}
	case "SPECIFIC_ATTRIBUTES":
		if !hasProj {
			msg := "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"
			if in.isQuery {
				msg = "1 validation error detected: " + msg
			}
			return nil, nil, apierr.Validation("%s", msg)
		}
	}
	if in.Select == "ALL_PROJECTED_ATTRIBUTES" && in.IndexName == nil {
		return nil, nil, apierr.Validation("ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName")
	}
	valueExprs := []namedExpr{{"FilterExpression", has(in.FilterExpression)}}
	if in.isQuery {
		valueExprs = append(valueExprs, namedExpr{"KeyConditionExpression", usesExpr})
	}
	p, err := in.params(usesExpr || has(in.ProjectionExpression) || has(in.FilterExpression), false, valueExprs...)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRCC(in.ReturnConsumedCapacity); err != nil {
		return nil, nil, err
	}
	r := &reader{sel: in.Select, rcc: in.ReturnConsumedCapacity, consistent: in.ConsistentRead}
	if in.Limit != nil {
		r.limit = *in.Limit
	}
	if r.proj, err = parseProj(in.ProjectionExpression, in.AttributesToGet, p); err != nil {
		return nil, nil, err
	}
	if in.FilterExpression != nil {
		if r.filter, err = expr.ParseFilter(*in.FilterExpression, p); err != nil {
			return nil, nil, err
		}
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, nil, err
	}
	r.src.t = t
	t.mu.RLock() // indexes and attribute types may change (UpdateTable)
	defer t.mu.RUnlock()
	if in.FilterExpression != nil && in.isQuery {
		keyNames := t.key.names()
		if in.IndexName != nil {
			if ix := t.index(*in.IndexName); ix != nil {
				keyNames = schemaKey(ix.KeySchema).names()
			}
		}
		for _, n := range topNames(*in.FilterExpression, in.ExpressionAttributeNames) {
			for _, k := range keyNames {
				if n == k {
					return nil, nil, apierr.Validation("Filter Expression can only contain non-primary key attributes: Primary key attribute: %s", k)
				}
			}
		}
	}
	if in.IndexName != nil {
		ix := t.index(*in.IndexName)
		if ix == nil {
			return nil, nil, apierr.Validation("The table does not have the specified index: %s", *in.IndexName)
		}
		if ix.Global && in.ConsistentRead {
			return nil, nil, apierr.Validation("Consistent reads are not supported on global secondary indexes")
		}
		if ix.Global && in.Select == "ALL_ATTRIBUTES" && ix.Projection.ProjectionType != "ALL" {
			return nil, nil, apierr.Validation("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index %s because its projection type is not ALL", ix.IndexName)
		}
		r.src.ix = ix
	}
	if in.ExclusiveStartKey.Set() {
		esk, err := normReq(in.ExclusiveStartKey)
		if err != nil {
			return nil, nil, err
		}
		if err := r.checkESK(esk); err != nil {
			return nil, nil, err
		}
		r.esk = esk
	}
	return r, p, nil
}

// checkESK validates an ExclusiveStartKey against the source's key.
func (r *reader) checkESK(esk abi.Item) error {
	names := r.src.posNames()
	if len(esk) != len(names) {
		return apierr.Validation("The provided starting key is invalid")
	}
	for _, n := range names {
		v, ok := esk[n]
		if !ok {
			return apierr.Validation("The provided starting key is invalid")
		}
		if v.Kind.String() != r.src.t.types[n] {
			return apierr.Validation("The provided starting key is invalid: The provided key element does not match the schema")
		}
	}
	return nil
}

// page runs the read over candidates (in read order, already past the
// ExclusiveStartKey) and builds the response.
func (r *reader) page(candidates iter.Seq[abi.Item]) map[string]any {
	t, ix := r.src.t, r.src.ix
	names := r.src.posNames()
	var items []wire.Item
	count, scanned, size := 0, 0, 0
	var last abi.Item
	stopped := false
	for it := range candidates {
		if (r.limit > 0 && scanned >= r.limit) || size >= pageBytes {
			stopped = true
			break
		}
		scanned++
		size += itemSize(it)
		last = it
		// A local index fetches unprojected attributes from the table when
		// the request asks for them; a global one only has its projection.
		view, full := it, it
		if ix != nil && ix.Global {
			view = t.projectIndex(ix, it)
			full = view
		} else if ix != nil && r.sel != "ALL_ATTRIBUTES" && r.proj == nil {
			view = t.projectIndex(ix, it)
		}
		if r.filter != nil {
			ok, err := r.filter.Eval(full)
			if err != nil || !ok {
				continue
			}
		}
		count++
		if r.sel != "COUNT" {
			items = append(items, wire.Item(r.proj.apply(view)))
		}
	}
	if !stopped && ((r.limit > 0 && scanned >= r.limit) || size >= pageBytes) {
		stopped = true
	}
	out := map[string]any{"Count": count, "ScannedCount": scanned}
	if r.sel != "COUNT" {
		if items == nil {
			items = []wire.Item{}
		}
		out["Items"] = items
	}
	if stopped && last != nil {
		out["LastEvaluatedKey"] = wire.Item(lek(names, last))
	}
	ixName, global := "", false
	if ix != nil {
		ixName, global = ix.IndexName, ix.Global
	}
	if cc := consumed(r.rcc, t.name, ixName, global, readUnits(size, r.consistent)); cc != nil {
		out["ConsumedCapacity"] = cc
	}
	return out
}
