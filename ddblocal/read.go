package ddblocal

import (
	"iter"
	"strings"

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

// prepareRead checks what Query and Scan share, in DynamoDB's order:
// expression and legacy parameters not mixed, the legacy filter and
// AttributesToGet, ExclusiveStartKey's values, then (after scanChecks,
// Scan's own) the expressions, a Query's key condition among them (kce,
// or KeyConditions); then the table and index. The key condition is
// checked against the key schema by the caller, under the table's lock.
func (s *Server) prepareRead(in *readInput, kce *string, scanChecks func() error) (*reader, *keyCondition, error) {
	filterName, filterMap := "ScanFilter", in.ScanFilter
	exprs := []namedParam{{"ProjectionExpression", has(in.ProjectionExpression)}, {"FilterExpression", has(in.FilterExpression)}}
	if in.isQuery {
		filterName, filterMap = "QueryFilter", in.QueryFilter
		exprs = append(exprs, namedParam{"KeyConditionExpression", has(kce)})
	}
	legacy := []namedParam{{"AttributesToGet", in.AttributesToGet != nil}, {filterName, filterMap != nil}, {"ConditionalOperator", in.ConditionalOperator != ""}}
	if in.isQuery {
		legacy = append(legacy, namedParam{"KeyConditions", in.KeyConditions != nil})
	}
	if err := checkExprMix(exprs, legacy, in.ExpressionAttributeNames != nil, in.ExpressionAttributeValues.Set()); err != nil {
		return nil, nil, err
	}
	r := &reader{sel: in.Select, rcc: in.ReturnConsumedCapacity, consistent: in.ConsistentRead}
	var err error
	if in.isQuery {
		if r.filter, err = legacyFilter(filterMap, in.ConditionalOperator); err != nil {
			return nil, nil, err
		}
	}
	if err := checkAttrsToGet(in.AttributesToGet); err != nil {
		return nil, nil, err
	}
	if !in.isQuery {
		if r.filter, err = legacyFilter(filterMap, in.ConditionalOperator); err != nil {
			return nil, nil, err
		}
	}
	if in.ExclusiveStartKey.Set() {
		esk, err := normReq(in.ExclusiveStartKey)
		if err != nil {
			return nil, nil, startKeyValueError(err)
		}
		r.esk = esk
	}
	if in.isQuery && kce == nil && in.KeyConditions == nil {
		return nil, nil, apierr.Validation("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.")
	}
	if scanChecks != nil {
		if err := scanChecks(); err != nil {
			return nil, nil, err
		}
	}
	if err := in.checkSelect(); err != nil {
		return nil, nil, err
	}
	p, err := in.params()
	if err != nil {
		return nil, nil, err
	}
	var kc *keyCondition
	if in.isQuery && kce != nil {
		parsed, err := expr.ParseKeyConditionSyntax(*kce, p)
		if err != nil {
			return nil, nil, err
		}
		kc = &keyCondition{expr: parsed}
	}
	if in.FilterExpression != nil {
		if r.filter, err = expr.ParseFilter(*in.FilterExpression, p); err != nil {
			return nil, nil, err
		}
	}
	if r.proj, err = parseProj(in.ProjectionExpression, in.AttributesToGet, p); err != nil {
		return nil, nil, err
	}
	if err := p.CheckUnused(); err != nil {
		return nil, nil, err
	}
	if kc != nil {
		if err := kc.expr.Check(); err != nil {
			return nil, nil, err
		}
	}
	if in.isQuery && kc == nil {
		if _, err := filterConds(in.KeyConditions); err != nil {
			return nil, nil, err
		}
		if n := len(in.KeyConditions); n != 1 && n != 2 {
			return nil, nil, apierr.Validation("Conditions can be of length 1 or 2 only")
		}
		kc = &keyCondition{legacy: in.KeyConditions}
	}
	if err := checkRCC(in.ReturnConsumedCapacity); err != nil {
		return nil, nil, err
	}
	if in.Limit != nil {
		r.limit = *in.Limit
	}
	t, err := s.lookup(in.TableName)
	if err != nil {
		return nil, nil, err
	}
	r.src.t = t
	t.mu.RLock() // indexes and attribute types may change (UpdateTable)
	defer t.mu.RUnlock()
	if in.IndexName != nil {
		ix := t.index(*in.IndexName)
		if ix == nil {
			return nil, nil, apierr.Validation("The table does not have the specified index: %s", *in.IndexName)
		}
		if ix.Global && in.ConsistentRead {
			return nil, nil, apierr.Validation("Consistent reads are not supported on global secondary indexes")
		}
		if err := s.readableIndex(t, ix); err != nil {
			return nil, nil, err
		}
		r.src.ix = ix
	}
	if in.isQuery {
		keyNames := r.src.key().names()
		if filterMap != nil {
			if err := filterKeyAttr(filterMap, keyNames); err != nil {
				return nil, nil, err
			}
		}
		if in.FilterExpression != nil {
			for _, n := range topNames(*in.FilterExpression, in.ExpressionAttributeNames) {
				for _, k := range keyNames {
					if n == k {
						return nil, nil, apierr.Validation("Filter Expression can only contain non-primary key attributes: Primary key attribute: %s", k)
					}
				}
			}
		}
	}
	if r.esk != nil {
		if err := r.checkESKSource(in.isQuery); err != nil {
			return nil, nil, err
		}
	}
	if ix := r.src.ix; ix != nil && ix.Global && in.Select == "ALL_ATTRIBUTES" && ix.Projection.ProjectionType != "ALL" {
		return nil, nil, apierr.Validation("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index %s because its projection type is not ALL", ix.IndexName)
	}
	if r.esk != nil {
		if err := r.checkESKTable(); err != nil {
			return nil, nil, err
		}
	}
	return r, kc, nil
}

// keyCondition is a Query's key condition: its KeyConditionExpression,
// or its KeyConditions.
type keyCondition struct {
	expr   *expr.KeyCondition
	legacy map[string]*condition
}

// resolve checks the key condition against the key schema of the table
// or index queried and returns it.
func (k *keyCondition) resolve(key keyDef, types map[string]string) (*expr.KeyCondition, error) {
	if k.expr == nil {
		return legacyKeyCondition(k.legacy, key, types)
	}
	if err := k.expr.Validate(key.hash, key.rng, types); err != nil {
		return nil, err
	}
	return k.expr, nil
}

// startKeyValueError words an invalid value in ExclusiveStartKey as
// DynamoDB does: most messages with "The provided starting key is
// invalid: " before them, those about numbers and sets without.
func startKeyValueError(err error) error {
	ae, ok := err.(*apierr.Error)
	if !ok {
		return err
	}
	for _, w := range []string{"contains duplicates", "number set", "numeric value", "significant digits", "number with magnitude"} {
		if strings.Contains(ae.Message, w) {
			return err
		}
	}
	return apierr.Validation("The provided starting key is invalid: %s", ae.Message)
}

// checkSelect checks Select against the projection parameters.
func (in *readInput) checkSelect() error {
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
			return apierr.Validation("%sCannot specify the ProjectionExpression when choosing to get %s", prefix, what)
		}
		if in.AttributesToGet != nil {
			return apierr.Validation("%sCannot specify the AttributesToGet when choosing to get %s", prefix, what)
		}
	case "SPECIFIC_ATTRIBUTES":
		if !hasProj {
			msg := "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"
			if in.isQuery {
				msg = "1 validation error detected: " + msg
			}
			return apierr.Validation("%s", msg)
		}
	}
	if in.Select == "ALL_PROJECTED_ATTRIBUTES" && in.IndexName == nil {
		return apierr.Validation("ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName")
	}
	return nil
}

// checkESKSource checks an ExclusiveStartKey as DynamoDB does first: as
// many attributes as the source's position (its key and the table's),
// and, for a Query or an index, the source's key attributes present and
// valid.
func (r *reader) checkESKSource(query bool) error {
	if len(r.esk) != len(r.src.posNames()) {
		if query || r.src.ix != nil {
			return apierr.Validation("The provided starting key is invalid")
		}
		return apierr.Validation("The provided starting key is invalid: The provided key element does not match the schema")
	}
	if !query && r.src.ix == nil {
		return nil
	}
	for i, n := range r.src.key().names() {
		v, ok := r.esk[n]
		if !ok {
			return apierr.Validation("The provided starting key is invalid")
		}
		if err := keyPiece(r.src.t, n, v, i == 0, "One or more parameter values were invalid: "); err != nil {
			return err
		}
	}
	return nil
}

// checkESKTable checks an ExclusiveStartKey's table key attributes.
func (r *reader) checkESKTable() error {
	for i, n := range r.src.t.key.names() {
		v, ok := r.esk[n]
		if !ok {
			return apierr.Validation("The provided starting key is invalid: The provided key element does not match the schema")
		}
		if err := keyPiece(r.src.t, n, v, i == 0, "One or more parameter values were invalid: "); err != nil {
			return apierr.Validation("The provided starting key is invalid: %s", err.(*apierr.Error).Message)
		}
	}
	return nil
}

// keyPiece checks one key attribute's value: its type, not empty, its
// size.
func keyPiece(t *table, n string, v abi.Value, isHash bool, emptyPrefix string) error {
	if v.Kind.String() != t.types[n] {
		return apierr.Validation("The provided key element does not match the schema")
	}
	if isEmptyScalar(v) {
		return apierr.Validation("%sThe AttributeValue for a key attribute cannot contain an empty %s value. Key: %s", emptyPrefix, emptyKeyWord(v.Kind), n)
	}
	return checkKeySize(v, isHash)
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
