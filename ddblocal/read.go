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
	in         *readInput // a Query's parameters, for its checks after prepareRead
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
		r.in = in // query continues with DynamoDB's checks of the key condition
		return r, kc, nil
	}
	if r.esk != nil {
		if err := r.checkESKSource(false); err != nil {
			return nil, nil, err
		}
	}
	if err := r.checkGSIProjection(in); err != nil {
		return nil, nil, err
	}
	if r.esk != nil {
		if err := r.checkESKTable(); err != nil {
			return nil, nil, err
		}
	}
	return r, kc, nil
}

// checkGSIProjection refuses Select ALL_ATTRIBUTES on a global index that
// does not project every attribute.
func (r *reader) checkGSIProjection(in *readInput) error {
	if ix := r.src.ix; ix != nil && ix.Global && in.Select == "ALL_ATTRIBUTES" && ix.Projection.ProjectionType != "ALL" {
		return apierr.Validation("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index %s because its projection type is not ALL", ix.IndexName)
	}
	return nil
}

// checkNested refuses a projection, then a filter, reading inside a key
// attribute of the table or an index.
func (r *reader) checkNested(in *readInput) error {
	t := r.src.t
	if r.proj != nil && r.proj.expr != nil {
		if err := t.checkKeyPaths(r.proj.expr.Paths()); err != nil {
			return err
		}
	}
	if in.FilterExpression != nil {
		return t.checkKeyPaths(r.filter.Paths())
	}
	return nil
}

// checkFilterKeys refuses a Query's filter on a key attribute of the
// table or index queried.
func (r *reader) checkFilterKeys(in *readInput) error {
	keyNames := r.src.key().names()
	if in.QueryFilter != nil {
		if err := filterKeyAttr(in.QueryFilter, keyNames); err != nil {
			return err
		}
	}
	if in.FilterExpression != nil {
		for _, n := range topNames(*in.FilterExpression, in.ExpressionAttributeNames) {
			for _, k := range keyNames {
				if n == k {
					return apierr.Validation("Filter Expression can only contain non-primary key attributes: Primary key attribute: %s", k)
				}
			}
		}
	}
	return nil
}

// keyCondition is a Query's key condition: its KeyConditionExpression,
// or its KeyConditions.
type keyCondition struct {
	expr   *expr.KeyCondition
	legacy map[string]*condition
}

// conds appends the key condition's conditions to dst as
// ComparisonOperators.
func (k *keyCondition) conds(dst []expr.LegacyCond) ([]expr.LegacyCond, error) {
	if k.expr != nil {
		return k.expr.AppendParts(dst), nil
	}
	return filterConds(k.legacy)
}

// findCond returns the condition on attr.
func findCond(conds []expr.LegacyCond, attr string) (expr.LegacyCond, bool) {
	for _, c := range conds {
		if c.Attr == attr {
			return c, true
		}
	}
	return expr.LegacyCond{}, false
}

// checkKey checks a Query's ExclusiveStartKey and key condition against
// the key schema of the table or index queried, attribute by attribute as
// DynamoDB does, and returns the key condition to run.
func (r *reader) checkKey(kc *keyCondition) (*expr.KeyCondition, error) {
	t, key := r.src.t, r.src.key()
	var buf [4]expr.LegacyCond
	conds, err := kc.conds(buf[:0])
	if err != nil {
		return nil, err
	}
	if r.esk != nil && len(r.esk) != len(r.src.posNames()) {
		return nil, apierr.Validation("The provided starting key is invalid")
	}
	for i, n := range key.names() {
		isHash := i == 0
		if r.esk != nil {
			v, ok := r.esk[n]
			if !ok {
				return nil, apierr.Validation("The provided starting key is invalid")
			}
			if err := keyPiece(t, n, v, isHash, "One or more parameter values were invalid: "); err != nil {
				return nil, err
			}
		}
		if isHash && key.rng == "" && len(conds) > 1 {
			return nil, apierr.Validation("Query key condition not supported")
		}
		c, ok := findCond(conds, n)
		if !ok {
			if isHash || len(conds) > 1 {
				return nil, apierr.Validation("Query condition missed key schema element: %s", n)
			}
			continue
		}
		switch c.Op {
		case "NULL", "NOT_NULL", "NE", "CONTAINS", "NOT_CONTAINS", "IN":
			return nil, apierr.Validation("Attempted conditional constraint is not an indexable operation")
		}
		for _, v := range c.Values {
			if v.Kind.String() != t.types[n] {
				return nil, invalidParam("Condition parameter type does not match schema type")
			}
		}
		if isHash && c.Op != "EQ" {
			return nil, apierr.Validation("Query key condition not supported")
		}
	}
	hc, _ := findCond(conds, key.hash)
	out := &expr.KeyCondition{HashName: key.hash, HashValue: hc.Values[0]}
	if c, ok := findCond(conds, key.rng); ok && key.rng != "" {
		op := map[string]string{"EQ": "=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "BETWEEN": "BETWEEN", "BEGINS_WITH": "begins_with"}[c.Op]
		out.Range = &expr.RangeCond{Name: key.rng, Op: op, Values: c.Values}
	}
	return out, nil
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
	rangeKey := t.key.rng
	read := 0 // what the page read, as DynamoDB counts it toward 1 MB
	for it := range candidates {
		if (r.limit > 0 && scanned >= r.limit) || read >= pageBytes {
			stopped = true
			break
		}
		scanned++
		size += itemSize(it)
		read += pageSize(it, rangeKey)
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
	if !stopped && ((r.limit > 0 && scanned >= r.limit) || read >= pageBytes) {
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
