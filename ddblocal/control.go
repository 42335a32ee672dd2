package ddblocal

import (
	"context"
	"sort"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

func init() {
	register("DescribeTable", describeTable)
	register("DeleteTable", deleteTable)
	register("ListTables", listTables)
	register("UpdateTable", updateTable)
}

// lookupControl is lookup for the control plane, whose
// ResourceNotFoundException names the table.
func (s *Server) lookupControl(name string) (*table, error) {
	t, err := s.lookup(name)
	if ae, ok := err.(*apierr.Error); ok && ae.Code == "ResourceNotFoundException" {
		return nil, apierr.NotFound("Requested resource not found: Table: %s not found", name)
	}
	return t, err
}

// lookup returns the named table; unknown tables are a
// ResourceNotFoundException. The table is not locked.
func (s *Server) lookup(name string) (*table, error) {
	var c constraintErrors
	c.checkTableName("tableName", name)
	if err := c.err(); err != nil {
		return nil, err
	}
	s.catMu.RLock()
	t := s.tables[tableNameOf(name)]
	s.catMu.RUnlock()
	if t == nil {
		return nil, apierr.NotFound("Requested resource not found")
	}
	return t, nil
}

var errGone = apierr.NotFound("Requested resource not found")

func (s *Server) tableARN(name string) string {
	return "arn:aws:dynamodb:" + s.opts.Region + ":" + s.opts.AccountID + ":table/" + name
}

// describe builds a TableDescription; the caller holds t.mu.
func (s *Server) describe(t *table, status string) map[string]any {
	m := t.meta
	d := map[string]any{
		"TableName":                 m.TableName,
		"TableArn":                  s.tableARN(m.TableName),
		"TableId":                   m.TableID,
		"TableStatus":               status,
		"KeySchema":                 m.KeySchema,
		"AttributeDefinitions":      m.AttributeDefinitions,
		"CreationDateTime":          float64(m.CreatedAt.UnixMilli()) / 1000,
		"ItemCount":                 t.count,
		"TableSizeBytes":            t.size,
		"DeletionProtectionEnabled": false,
	}
	tp := map[string]any{"ReadCapacityUnits": 0, "WriteCapacityUnits": 0, "NumberOfDecreasesToday": 0}
	if m.Throughput != nil {
		tp["ReadCapacityUnits"], tp["WriteCapacityUnits"] = m.Throughput.ReadCapacityUnits, m.Throughput.WriteCapacityUnits
	}
	d["ProvisionedThroughput"] = tp
	if m.BillingMode == "PAY_PER_REQUEST" {
		d["BillingModeSummary"] = map[string]any{"BillingMode": "PAY_PER_REQUEST"}
	}
	idx := func(ix indexDef, global bool) map[string]any {
		ixd := map[string]any{
			"IndexName":      ix.IndexName,
			"IndexArn":       s.tableARN(m.TableName) + "/index/" + ix.IndexName,
			"KeySchema":      ix.KeySchema,
			"Projection":     ix.Projection,
			"IndexSizeBytes": 0,
			"ItemCount":      0,
		}
		if st := t.idx[ix.IndexName]; st != nil {
			ixd["ItemCount"], ixd["IndexSizeBytes"] = st.count, st.size
		}
		if global {
			ixd["IndexStatus"] = "ACTIVE"
			p := map[string]any{"ReadCapacityUnits": 0, "WriteCapacityUnits": 0, "NumberOfDecreasesToday": 0}
			if ix.ProvisionedThroughput != nil {
				p["ReadCapacityUnits"], p["WriteCapacityUnits"] = ix.ProvisionedThroughput.ReadCapacityUnits, ix.ProvisionedThroughput.WriteCapacityUnits
			}
			ixd["ProvisionedThroughput"] = p
		}
		return ixd
	}
	if len(m.GSIs) > 0 {
		var l []map[string]any
		for _, ix := range m.GSIs {
			l = append(l, idx(ix, true))
		}
		d["GlobalSecondaryIndexes"] = l
	}
	if len(m.LSIs) > 0 {
		var l []map[string]any
		for _, ix := range m.LSIs {
			l = append(l, idx(ix, false))
		}
		d["LocalSecondaryIndexes"] = l
	}
	if m.Stream != nil {
		d["StreamSpecification"] = m.Stream
		if m.Stream.StreamEnabled || m.StreamArn != "" {
			d["LatestStreamArn"] = m.StreamArn
			d["LatestStreamLabel"] = m.StreamLabel
		}
	}
	return d
}

type tableNameInput struct {
	TableName string
}

func describeTable(s *Server, ctx context.Context, body []byte) (any, error) {
	var in tableNameInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	if err := checkDescribeName(in.TableName); err != nil {
		return nil, err
	}
	t, err := s.lookupControl(in.TableName)
	if err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return nil, apierr.NotFound("Requested resource not found: Table: %s not found", in.TableName)
	}
	return map[string]any{"Table": s.describe(t, "ACTIVE")}, nil
}

func deleteTable(s *Server, ctx context.Context, body []byte) (any, error) {
	var in tableNameInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	if err := checkDescribeName(in.TableName); err != nil {
		return nil, err
	}
	s.catMu.Lock()
	defer s.catMu.Unlock()
	in.TableName = tableNameOf(in.TableName)
	t := s.tables[in.TableName]
	if t == nil {
		return nil, apierr.NotFound("Requested resource not found: Table: %s not found", in.TableName)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := s.dropTable(in.TableName); err != nil {
		return nil, err
	}
	if t.meta.StreamArn != "" && t.meta.Stream != nil && t.meta.Stream.StreamEnabled {
		if err := s.streams.Disable(t.meta.StreamArn); err != nil {
			s.log.Warn("ddblocal: storing the disabled stream of a deleted table", "table", in.TableName, "err", err)
		}
		if err := s.streams.Flush(); err != nil {
			s.log.Warn("ddblocal: storing the disabled stream of a deleted table", "table", in.TableName, "err", err)
		}
	}
	desc := s.describe(t, "DELETING")
	t.deleted = true
	delete(s.tables, in.TableName)
	return map[string]any{"TableDescription": desc}, nil
}

type listTablesInput struct {
	ExclusiveStartTableName string
	Limit                   *int
}

func listTables(s *Server, ctx context.Context, body []byte) (any, error) {
	var in listTablesInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	limit := 100
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > 100 {
			return nil, apierr.Validation("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value %s", *in.Limit, map[bool]string{true: "greater than or equal to 1", false: "less than or equal to 100"}[*in.Limit < 1])
		}
		limit = *in.Limit
	}
	s.catMu.RLock()
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		if n > in.ExclusiveStartTableName {
			names = append(names, n)
		}
	}
	s.catMu.RUnlock()
	sort.Strings(names)
	out := map[string]any{}
	if len(names) > limit {
		names = names[:limit]
		out["LastEvaluatedTableName"] = names[limit-1]
	}
	out["TableNames"] = names
	return out, nil
}

type updateTableInput struct {
	TableName                   string
	BillingMode                 string
	ProvisionedThroughput       *throughput
	StreamSpecification         *streamSpec
	AttributeDefinitions        []attrDef
	GlobalSecondaryIndexUpdates []struct {
		Create *indexDef
		Delete *struct{ IndexName string }
		Update *struct {
			IndexName             string
			ProvisionedThroughput *throughput
		}
	}
}

func updateTable(s *Server, ctx context.Context, body []byte) (any, error) {
	var in updateTableInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	t, err := s.lookupControl(in.TableName)
	if err != nil {
		return nil, err
	}
	if in.ProvisionedThroughput == nil && in.BillingMode == "" && in.StreamSpecification == nil && len(in.GlobalSecondaryIndexUpdates) == 0 {
		return nil, apierr.Validation("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deleted {
		return nil, errGone
	}
	m := t.meta
	if in.BillingMode != "" {
		m.BillingMode = in.BillingMode
	}
	if in.ProvisionedThroughput != nil {
		m.Throughput = in.ProvisionedThroughput
	}
	defs := append([]attrDef(nil), m.AttributeDefinitions...)
	for _, d := range in.AttributeDefinitions {
		found := false
		for _, e := range defs {
			if e.AttributeName == d.AttributeName {
				found = true
				if e.AttributeType != d.AttributeType {
					return nil, apierr.Validation("One or more parameter values were invalid: Cannot change the type of an existing attribute: %s", d.AttributeName)
				}
			}
		}
		if !found {
			defs = append(defs, d)
		}
	}
	m.AttributeDefinitions = defs
	gsis := append([]indexDef(nil), m.GSIs...)
	for _, u := range in.GlobalSecondaryIndexUpdates {
		switch {
		case u.Create != nil:
			var c constraintErrors
			c.checkName("globalSecondaryIndexUpdates.1.member.create.indexName", u.Create.IndexName)
			if err := c.err(); err != nil {
				return nil, err
			}
			if u.Create.Projection.ProjectionType == "" {
				return nil, apierr.Validation("One or more parameter values were invalid: Unknown ProjectionType: null")
			}
			if len(u.Create.KeySchema) == 0 {
				return nil, apierr.Validation("Invalid KeySchema: Some index key attribute have no definition")
			}
			for _, g := range gsis {
				if g.IndexName == u.Create.IndexName {
					return nil, apierr.Validation("One or more parameter values were invalid: Duplicate index name: %s", g.IndexName)
				}
			}
			for _, k := range u.Create.KeySchema {
				ok := false
				for _, d := range defs {
					ok = ok || d.AttributeName == k.AttributeName
				}
				if !ok {
					return nil, apierr.Validation("One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions.")
				}
			}
			gsis = append(gsis, *u.Create)
		case u.Delete != nil:
			found := false
			for i, g := range gsis {
				if g.IndexName == u.Delete.IndexName {
					gsis = append(gsis[:i], gsis[i+1:]...)
					found = true
					break
				}
			}
			if !found {
				return nil, apierr.NotFound("Requested resource not found: Index: %s not found", u.Delete.IndexName)
			}
		}
	}
	m.GSIs = gsis
	if sp := in.StreamSpecification; sp != nil {
		if sp.StreamEnabled {
			if !viewTypes[sp.StreamViewType] {
				return nil, apierr.Validation("One or more parameter values were invalid: You must specify a StreamViewType when enabling a stream")
			}
			if m.Stream != nil && m.Stream.StreamEnabled {
				return nil, apierr.Validation("Table already has an enabled stream: TableName: %s", m.TableName)
			}
		} else if m.Stream == nil || !m.Stream.StreamEnabled {
			return nil, apierr.Validation("Table already has no stream enabled: TableName: %s", m.TableName)
		}
	}
	old := t.meta
	t.setMeta(m)
	if sp := in.StreamSpecification; sp != nil {
		if sp.StreamEnabled {
			s.enableStream(t, sp.StreamViewType)
		} else {
			if err := s.streams.Disable(t.meta.StreamArn); err != nil {
				s.failStore(err) // memory holds a disabling the data file may lack
				t.setMeta(old)
				return nil, storeErr(err)
			}
			t.meta.Stream = &streamSpec{StreamEnabled: false}
		}
	}
	if err := s.saveMeta(t); err != nil {
		t.setMeta(old)
		return nil, err
	}
	// Like DynamoDB, UpdateTable answers UPDATING; the change is done (and
	// DescribeTable says ACTIVE) at once.
	return map[string]any{"TableDescription": s.describe(t, "UPDATING")}, nil
}
