package ddblocal

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

type createTableInput struct {
	TableName              string
	KeySchema              []keyElem
	AttributeDefinitions   []attrDef
	GlobalSecondaryIndexes []indexDef
	LocalSecondaryIndexes  []indexDef
	BillingMode            string
	ProvisionedThroughput  *throughput
	StreamSpecification    *streamSpec
	Tags                   []tag
}

func init() { register("CreateTable", createTable) }

func createTable(s *Server, ctx context.Context, body []byte) (any, error) {
	var in createTableInput
	if err := decode(ctx, body, &in); err != nil {
		return nil, err
	}
	if err := validateCreateTable(&in); err != nil {
		return nil, err
	}
	tags, err := createTags(in.Tags)
	if err != nil {
		return nil, err
	}
	m := tableMeta{
		TableName:            in.TableName,
		KeySchema:            in.KeySchema,
		AttributeDefinitions: in.AttributeDefinitions,
		GSIs:                 in.GlobalSecondaryIndexes,
		LSIs:                 in.LocalSecondaryIndexes,
		BillingMode:          in.BillingMode,
		Throughput:           in.ProvisionedThroughput,
		CreatedAt:            s.now(),
		TableID:              uuid(),
		Tags:                 tags,
	}
	if m.BillingMode == "" {
		m.BillingMode = "PROVISIONED"
	}
	s.catMu.Lock()
	defer s.catMu.Unlock()
	s.dropGhosts()
	_, deleting := s.ghostOf(in.TableName)
	if _, ok := s.tables[in.TableName]; ok || deleting {
		return nil, apierr.New("ResourceInUseException", 400, "Table already exists: %s", in.TableName)
	}
	t := newTable(m)
	s.startTransition(t, "CREATING")
	if sp := in.StreamSpecification; sp != nil && sp.StreamEnabled {
		s.enableStream(t, sp.StreamViewType)
	}
	if err := s.saveMeta(t); err != nil {
		return nil, err
	}
	s.tables[in.TableName] = t
	// Like DynamoDB, CreateTable answers CREATING; the table is usable (and
	// DescribeTable says ACTIVE) at once.
	return map[string]any{"TableDescription": s.describe(t, "CREATING")}, nil
}

func (s *Server) enableStream(t *table, viewType string) {
	arn, label := s.streams.Enable(t.name, viewType, t.key.names())
	t.meta.Stream = &streamSpec{StreamEnabled: true, StreamViewType: viewType}
	t.meta.StreamArn, t.meta.StreamLabel = arn, label
}

func uuid() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

var viewTypes = map[string]bool{"NEW_IMAGE": true, "OLD_IMAGE": true, "NEW_AND_OLD_IMAGES": true, "KEYS_ONLY": true}

// maxCapacityUnits is the largest ReadCapacityUnits or WriteCapacityUnits
// DynamoDB accepts.
const maxCapacityUnits = 1_000_000_000_000

// validateCreateTable makes CreateTable's checks beyond its parameters'
// constraints (internal/reqshape), in DynamoDB's order and words.
func validateCreateTable(in *createTableInput) error {
	inval := func(f string, a ...any) error {
		return apierr.Validation("One or more parameter values were invalid: "+f, a...)
	}
	if in.BillingMode == "PAY_PER_REQUEST" {
		if in.ProvisionedThroughput != nil {
			return inval("Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
		}
	} else {
		p := in.ProvisionedThroughput
		if p == nil || p.ReadCapacityUnits == 0 || p.WriteCapacityUnits == 0 {
			return inval("ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
		}
		if p.ReadCapacityUnits > maxCapacityUnits {
			return apierr.Validation("Given value %d for ReadCapacityUnits is out of bounds", p.ReadCapacityUnits)
		}
		if p.WriteCapacityUnits > maxCapacityUnits {
			return apierr.Validation("Given value %d for WriteCapacityUnits is out of bounds", p.WriteCapacityUnits)
		}
	}
	defs := map[string]bool{}
	var defNames []string
	for _, d := range in.AttributeDefinitions {
		defs[d.AttributeName] = true
		defNames = append(defNames, d.AttributeName)
	}
	used := map[string]bool{}
	checkSchema := func(ks []keyElem) error {
		var names []string
		for _, k := range ks {
			names = append(names, k.AttributeName)
		}
		for _, n := range names {
			if !defs[n] {
				return inval("Some index key attributes are not defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]", strings.Join(names, ", "), strings.Join(defNames, ", "))
			}
			used[n] = true
		}
		if len(ks) == 2 && ks[0].AttributeName == ks[1].AttributeName {
			return apierr.Validation("Both the Hash Key and the Range Key element in the KeySchema have the same name")
		}
		if ks[0].KeyType != "HASH" {
			return apierr.Validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
		}
		if len(ks) == 2 && ks[1].KeyType != "RANGE" {
			return apierr.Validation("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type")
		}
		return nil
	}
	if len(in.KeySchema) > len(in.AttributeDefinitions) {
		return apierr.Validation("Invalid KeySchema: Some index key attribute have no definition")
	}
	if err := checkSchema(in.KeySchema); err != nil {
		return err
	}
	if in.LocalSecondaryIndexes == nil && in.GlobalSecondaryIndexes == nil && len(in.KeySchema) != len(in.AttributeDefinitions) {
		return inval("Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions")
	}
	names := map[string]bool{}
	checkProj := func(ix *indexDef) error {
		switch ix.Projection.ProjectionType {
		case "":
			return inval("Unknown ProjectionType: null")
		}
		if ix.Projection.NonKeyAttributes != nil && ix.Projection.ProjectionType != "INCLUDE" {
			return inval("ProjectionType is %s, but NonKeyAttributes is specified", ix.Projection.ProjectionType)
		}
		return nil
	}
	checkName := func(ix *indexDef) error {
		if names[ix.IndexName] {
			return inval("Duplicate index name: %s", ix.IndexName)
		}
		names[ix.IndexName] = true
		return nil
	}
	if in.LocalSecondaryIndexes != nil {
		if len(in.LocalSecondaryIndexes) == 0 {
			return inval("List of LocalSecondaryIndexes is empty")
		}
		if len(in.KeySchema) != 2 {
			return inval("Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex")
		}
		for i := range in.LocalSecondaryIndexes {
			ix := &in.LocalSecondaryIndexes[i]
			if err := checkSchema(ix.KeySchema); err != nil {
				return err
			}
			if len(ix.KeySchema) != 2 {
				return inval("Index KeySchema does not have a range key for index: %s", ix.IndexName)
			}
			if ix.KeySchema[0].AttributeName != in.KeySchema[0].AttributeName {
				return inval("Index KeySchema does not have the same leading hash key as table KeySchema for index: %s. index hash key: %s, table hash key: %s", ix.IndexName, ix.KeySchema[0].AttributeName, in.KeySchema[0].AttributeName)
			}
			if err := checkProj(ix); err != nil {
				return err
			}
			if err := checkName(ix); err != nil {
				return err
			}
			ix.ProvisionedThroughput = nil
		}
		if len(in.LocalSecondaryIndexes) > 5 {
			return inval("Number of LocalSecondaryIndexes exceeds per-table limit of 5")
		}
	}
	if in.GlobalSecondaryIndexes != nil {
		if len(in.GlobalSecondaryIndexes) == 0 {
			return inval("List of GlobalSecondaryIndexes is empty")
		}
		for i := range in.GlobalSecondaryIndexes {
			ix := &in.GlobalSecondaryIndexes[i]
			if err := checkSchema(ix.KeySchema); err != nil {
				return err
			}
			if err := checkProj(ix); err != nil {
				return err
			}
			if in.BillingMode == "PAY_PER_REQUEST" && ix.ProvisionedThroughput != nil {
				return inval("ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST", ix.IndexName)
			}
			if err := checkName(ix); err != nil {
				return err
			}
		}
		if len(in.GlobalSecondaryIndexes) > 20 {
			return inval("GlobalSecondaryIndex count exceeds the per-table limit of 20")
		}
		for i := range in.GlobalSecondaryIndexes {
			ix := &in.GlobalSecondaryIndexes[i]
			if in.BillingMode != "PAY_PER_REQUEST" && ix.ProvisionedThroughput == nil {
				return inval("ProvisionedThroughput must be specified for index: %s", ix.IndexName)
			}
		}
	}
	if len(used) != len(defs) {
		return inval("Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions")
	}
	if sp := in.StreamSpecification; sp != nil {
		if sp.StreamEnabled && !viewTypes[sp.StreamViewType] {
			return apierr.Validation("One or more parameter values were invalid: You must specify a StreamViewType when enabling a stream")
		}
		if !sp.StreamEnabled && sp.StreamViewType != "" {
			return apierr.Validation("One or more parameter values were invalid: You cannot set StreamViewType when StreamEnabled is false")
		}
	}
	return nil
}
