package ddblocal

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

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
	if t == nil || s.creatingNow(t) {
		return nil, apierr.NotFound("Requested resource not found")
	}
	return t, nil
}

// lookupAny returns the named table whatever its status (the control
// plane's view); unknown tables are a ResourceNotFoundException naming
// the table.
func (s *Server) lookupAny(name string) (*table, error) {
	s.catMu.RLock()
	t := s.tables[tableNameOf(name)]
	s.catMu.RUnlock()
	if t == nil {
		return nil, apierr.NotFound("Requested resource not found: Table: %s not found", name)
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
		d["TableThroughputModeSummary"] = map[string]any{"TableThroughputMode": "PAY_PER_REQUEST"}
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
			ixd["IndexStatus"] = s.indexStatus(t, ix.IndexName)
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
	t, err := s.lookupAny(in.TableName)
	if err != nil {
		s.catMu.RLock()
		desc, ok := s.ghostOf(tableNameOf(in.TableName))
		s.catMu.RUnlock()
		if ok {
			return map[string]any{"Table": desc}, nil
		}
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.deleted {
		return nil, apierr.NotFound("Requested resource not found: Table: %s not found", in.TableName)
	}
	return map[string]any{"Table": s.describe(t, s.status(t))}, nil
}

func deleteTable(s *Server, ctx context.Context, body []byte) (any, error) {
	var in tableNameInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	s.catMu.Lock()
	defer s.catMu.Unlock()
	s.dropGhosts()
	in.TableName = tableNameOf(in.TableName)
	t := s.tables[in.TableName]
	if t == nil {
		return nil, apierr.NotFound("Requested resource not found: Table: %s not found", in.TableName)
	}
	t.lockMeta()
	defer t.unlockMeta()
	if s.status(t) == "CREATING" {
		return nil, s.inUse(t)
	}
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
	delete(desc, "GlobalSecondaryIndexes") // as DynamoDB's DeleteTable answers
	t.deleted = true
	delete(s.tables, in.TableName)
	s.addGhost(in.TableName, desc)
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
		limit = *in.Limit
	}
	s.catMu.RLock()
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		if n > in.ExclusiveStartTableName {
			names = append(names, n)
		}
	}
	for n := range s.ghosts {
		if _, ok := s.ghostOf(n); ok && n > in.ExclusiveStartTableName {
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
	SSESpecification            json.RawMessage
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

// checkUpdateTable makes UpdateTable's checks that need no table, in
// DynamoDB's order and words.
func checkUpdateTable(in *updateTableInput) error {
	if in.ProvisionedThroughput == nil && in.BillingMode == "" && in.StreamSpecification == nil && len(in.GlobalSecondaryIndexUpdates) == 0 && in.SSESpecification == nil {
		return apierr.Validation("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required")
	}
	if in.BillingMode == "PROVISIONED" && in.ProvisionedThroughput == nil {
		return apierr.Validation("One or more parameter values were invalid: ProvisionedThroughput must be specified when BillingMode is PROVISIONED")
	}
	if p := in.ProvisionedThroughput; p != nil {
		if p.ReadCapacityUnits > maxCapacityUnits {
			return apierr.Validation("Given value %d for ReadCapacityUnits is out of bounds", p.ReadCapacityUnits)
		}
		if p.WriteCapacityUnits > maxCapacityUnits {
			return apierr.Validation("Given value %d for WriteCapacityUnits is out of bounds", p.WriteCapacityUnits)
		}
	}
	seen := map[string]bool{}
	for _, u := range in.GlobalSecondaryIndexUpdates {
		var name string
		switch {
		case u.Update != nil:
			name = u.Update.IndexName
		case u.Create != nil:
			name = u.Create.IndexName
		case u.Delete != nil:
			name = u.Delete.IndexName
		default:
			return apierr.Validation("One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null")
		}
		if seen[name] {
			return apierr.Validation("One or more parameter values were invalid: Only one global secondary index update per index is allowed simultaneously. Index: %s", name)
		}
		seen[name] = true
	}
	return nil
}

// updateTable changes a table's billing, throughput, stream and global
// secondary indexes. Every check comes before any change: a refused
// request leaves the table as it was.
func updateTable(s *Server, ctx context.Context, body []byte) (any, error) {
	var in updateTableInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	if err := checkUpdateTable(&in); err != nil {
		return nil, err
	}
	t, err := s.lookupAny(in.TableName)
	if err != nil {
		return nil, err
	}
	t.lockMeta()
	defer t.unlockMeta()
	if t.deleted {
		return nil, apierr.NotFound("Requested resource not found: Table: %s not found", in.TableName)
	}
	if err := s.inUse(t); err != nil {
		return nil, err
	}
	m := t.meta
	mode := in.BillingMode
	if mode == "" {
		mode = m.BillingMode
	}
	if in.ProvisionedThroughput != nil && mode == "PAY_PER_REQUEST" {
		return nil, apierr.Validation("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
	}
	online := 0
	for _, u := range in.GlobalSecondaryIndexUpdates {
		if u.Create != nil || u.Delete != nil {
			online++
		}
	}
	if online > 1 || len(in.GlobalSecondaryIndexUpdates) > 5 {
		return nil, apierr.New("LimitExceededException", 400, "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table")
	}
	gsis := make([]indexDef, len(m.GSIs))
	copy(gsis, m.GSIs)
	for _, u := range in.GlobalSecondaryIndexUpdates {
		if u.Update == nil {
			continue
		}
		p := u.Update.ProvisionedThroughput
		if p != nil && (p.ReadCapacityUnits > maxCapacityUnits || p.WriteCapacityUnits > maxCapacityUnits) {
			return nil, apierr.Validation("This operation cannot be performed with given input values. Please contact DynamoDB service team for more info: Action Blocked: IndexUpdate")
		}
		found := false
		for i := range gsis {
			if gsis[i].IndexName == u.Update.IndexName {
				found = true
				if mode == "PAY_PER_REQUEST" {
					return nil, apierr.Validation("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
				}
				tp := *p
				gsis[i].ProvisionedThroughput = &tp
			}
		}
		if !found {
			return nil, apierr.NotFound("Requested resource not found: Index: %s not found", u.Update.IndexName)
		}
	}
	if p, cur := in.ProvisionedThroughput, m.Throughput; p != nil && cur != nil && m.BillingMode != "PAY_PER_REQUEST" &&
		p.ReadCapacityUnits == cur.ReadCapacityUnits && p.WriteCapacityUnits == cur.WriteCapacityUnits {
		return nil, apierr.Validation("The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: %d. Requested ReadCapacityUnits: %d. Current WriteCapacityUnits provisioned for the table: %d. Requested WriteCapacityUnits: %d. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
			cur.ReadCapacityUnits, p.ReadCapacityUnits, cur.WriteCapacityUnits, p.WriteCapacityUnits)
	}
	if in.BillingMode == "PROVISIONED" && m.BillingMode == "PAY_PER_REQUEST" {
		var missing []string
		for _, g := range gsis {
			if g.ProvisionedThroughput == nil || (g.ProvisionedThroughput.ReadCapacityUnits == 0 && g.ProvisionedThroughput.WriteCapacityUnits == 0) {
				missing = append(missing, g.IndexName)
			}
		}
		if len(missing) > 0 {
			return nil, apierr.Validation("One or more parameter values were invalid: ProvisionedThroughput must be specified for index: %s", strings.Join(missing, ","))
		}
	}
	if in.BillingMode != "" {
		m.BillingMode = in.BillingMode
	}
	if in.ProvisionedThroughput != nil {
		m.Throughput = in.ProvisionedThroughput
	}
	if m.BillingMode == "PAY_PER_REQUEST" {
		m.Throughput = nil
		for i := range gsis {
			gsis[i].ProvisionedThroughput = nil
		}
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
	var created []string
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
			created = append(created, u.Create.IndexName)
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
	// Like DynamoDB, UpdateTable answers UPDATING; the change is done at
	// once, and the table UPDATING (a new index CREATING) for the table
	// delay.
	s.startTransition(t, "UPDATING", created...)
	return map[string]any{"TableDescription": s.describe(t, "UPDATING")}, nil
}
