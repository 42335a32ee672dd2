package conformance

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestConformance_CreateTable_HashKey(t *testing.T) {
	t.Parallel()
	name := hashTable(t)
	d := waitActive(t, name)
	if aws.ToString(d.TableName) != name {
		t.Fatalf("TableName = %q, want %q", aws.ToString(d.TableName), name)
	}
	if len(d.KeySchema) != 1 || aws.ToString(d.KeySchema[0].AttributeName) != "pk" || d.KeySchema[0].KeyType != types.KeyTypeHash {
		t.Fatalf("KeySchema = %+v, want pk HASH", d.KeySchema)
	}
	if len(d.AttributeDefinitions) != 1 || d.AttributeDefinitions[0].AttributeType != types.ScalarAttributeTypeS {
		t.Fatalf("AttributeDefinitions = %+v", d.AttributeDefinitions)
	}
	if !strings.Contains(aws.ToString(d.TableArn), ":table/"+name) {
		t.Fatalf("TableArn = %q, want it to end in table/%s", aws.ToString(d.TableArn), name)
	}
}

func TestConformance_CreateTable_HashRangeKey(t *testing.T) {
	t.Parallel()
	name := rangeTable(t, types.ScalarAttributeTypeN)
	d := waitActive(t, name)
	if len(d.KeySchema) != 2 || d.KeySchema[1].KeyType != types.KeyTypeRange || aws.ToString(d.KeySchema[1].AttributeName) != "sk" {
		t.Fatalf("KeySchema = %+v, want pk HASH, sk RANGE", d.KeySchema)
	}
	types2 := map[string]types.ScalarAttributeType{}
	for _, a := range d.AttributeDefinitions {
		types2[aws.ToString(a.AttributeName)] = a.AttributeType
	}
	if types2["pk"] != types.ScalarAttributeTypeS || types2["sk"] != types.ScalarAttributeTypeN {
		t.Fatalf("AttributeDefinitions = %v", types2)
	}
}

// indexedTable creates pk/sk (S) with a GSI per projection type and an LSI.
func indexedTable(t testing.TB) string {
	t.Helper()
	ks, ad := keySchema(types.ScalarAttributeTypeS)
	ad = append(ad,
		types.AttributeDefinition{AttributeName: aws.String("gpk"), AttributeType: types.ScalarAttributeTypeS},
		types.AttributeDefinition{AttributeName: aws.String("gsk"), AttributeType: types.ScalarAttributeTypeN},
		types.AttributeDefinition{AttributeName: aws.String("lsk"), AttributeType: types.ScalarAttributeTypeS},
	)
	gsiKeys := []types.KeySchemaElement{
		{AttributeName: aws.String("gpk"), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String("gsk"), KeyType: types.KeyTypeRange},
	}
	return createTable(t, &dynamodb.CreateTableInput{
		KeySchema: ks, AttributeDefinitions: ad,
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String("gsi_all"), KeySchema: gsiKeys, Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}},
			{IndexName: aws.String("gsi_keys"), KeySchema: gsiKeys, Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
			{IndexName: aws.String("gsi_incl"), KeySchema: gsiKeys, Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"extra"}}},
		},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{
			{IndexName: aws.String("lsi"), KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("lsk"), KeyType: types.KeyTypeRange},
			}, Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}},
		},
	})
}

func TestConformance_CreateTable_SecondaryIndexes(t *testing.T) {
	t.Parallel()
	d := waitActive(t, indexedTable(t))
	got := map[string]types.ProjectionType{}
	for _, g := range d.GlobalSecondaryIndexes {
		got[aws.ToString(g.IndexName)] = g.Projection.ProjectionType
		if g.IndexStatus != types.IndexStatusActive {
			t.Errorf("GSI %s IndexStatus = %s, want ACTIVE", aws.ToString(g.IndexName), g.IndexStatus)
		}
		if aws.ToString(g.IndexName) == "gsi_incl" && (len(g.Projection.NonKeyAttributes) != 1 || g.Projection.NonKeyAttributes[0] != "extra") {
			t.Errorf("gsi_incl NonKeyAttributes = %v, want [extra]", g.Projection.NonKeyAttributes)
		}
		if !strings.HasSuffix(aws.ToString(g.IndexArn), "/index/"+aws.ToString(g.IndexName)) {
			t.Errorf("IndexArn = %q", aws.ToString(g.IndexArn))
		}
	}
	want := map[string]types.ProjectionType{"gsi_all": "ALL", "gsi_keys": "KEYS_ONLY", "gsi_incl": "INCLUDE"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("GSI %s projection = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if len(d.LocalSecondaryIndexes) != 1 || aws.ToString(d.LocalSecondaryIndexes[0].IndexName) != "lsi" ||
		d.LocalSecondaryIndexes[0].Projection.ProjectionType != types.ProjectionTypeAll {
		t.Errorf("LocalSecondaryIndexes = %+v", d.LocalSecondaryIndexes)
	}
}

func TestConformance_CreateTable_StreamViewTypes(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	for _, vt := range []types.StreamViewType{types.StreamViewTypeKeysOnly, types.StreamViewTypeNewImage, types.StreamViewTypeOldImage, types.StreamViewTypeNewAndOldImages} {
		t.Run(string(vt), func(t *testing.T) {
			t.Parallel()
			ks, ad := keySchema("")
			name := createTable(t, &dynamodb.CreateTableInput{KeySchema: ks, AttributeDefinitions: ad,
				StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: vt}})
			d := waitActive(t, name)
			if d.StreamSpecification == nil || !aws.ToBool(d.StreamSpecification.StreamEnabled) || d.StreamSpecification.StreamViewType != vt {
				t.Fatalf("StreamSpecification = %+v, want enabled %s", d.StreamSpecification, vt)
			}
			arn := aws.ToString(d.LatestStreamArn)
			if !strings.Contains(arn, ":table/"+name+"/stream/") {
				t.Fatalf("LatestStreamArn = %q, want ...:table/%s/stream/<label>", arn, name)
			}
			if d.LatestStreamLabel == nil || !strings.HasSuffix(arn, "/stream/"+*d.LatestStreamLabel) {
				t.Fatalf("LatestStreamLabel = %v, not the ARN's last element (%s)", d.LatestStreamLabel, arn)
			}
		})
	}
}

func TestConformance_CreateTable_ExistingIsResourceInUse(t *testing.T) {
	t.Parallel()
	name := hashTable(t)
	ks, ad := keySchema("")
	_, err := ddb(t).CreateTable(ctx(t), &dynamodb.CreateTableInput{TableName: aws.String(name), KeySchema: ks,
		AttributeDefinitions: ad, BillingMode: types.BillingModePayPerRequest})
	var riu *types.ResourceInUseException
	if !errors.As(err, &riu) {
		t.Fatalf("CreateTable of an existing table: want ResourceInUseException, got %v", err)
	}
}

func TestConformance_CreateTable_UndefinedKeyAttributeIsValidation(t *testing.T) {
	t.Parallel()
	_, err := ddb(t).CreateTable(ctx(t), &dynamodb.CreateTableInput{
		TableName:            aws.String(tableName(t)),
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("other"), AttributeType: types.ScalarAttributeTypeS}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	requireValidation(t, err, "key attribute missing from AttributeDefinitions")
}

func TestConformance_DescribeTable_UnknownIsResourceNotFound(t *testing.T) {
	t.Parallel()
	_, err := ddb(t).DescribeTable(ctx(t), &dynamodb.DescribeTableInput{TableName: aws.String(tableName(t) + "_missing")})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("want ResourceNotFoundException, got %v", err)
	}
}

func TestConformance_DeleteTable_RemovesTable(t *testing.T) {
	t.Parallel()
	name := hashTable(t)
	out, err := ddb(t).DeleteTable(ctx(t), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	noErr(t, err, "DeleteTable")
	if aws.ToString(out.TableDescription.TableName) != name {
		t.Fatalf("DeleteTable returned %q", aws.ToString(out.TableDescription.TableName))
	}
	waitGone(t, name)
	_, err = ddb(t).GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(name), Key: Item{"pk": s("a")}})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("GetItem on a deleted table: want ResourceNotFoundException, got %v", err)
	}
	_, err = ddb(t).DeleteTable(ctx(t), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	if !errors.As(err, &rnf) {
		t.Fatalf("DeleteTable twice: want ResourceNotFoundException, got %v", err)
	}
}

func waitGone(t testing.TB, name string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		_, err := ddb(t).DescribeTable(ctx(t), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		var rnf *types.ResourceNotFoundException
		if errors.As(err, &rnf) {
			return
		}
		noErr(t, err, "DescribeTable")
		sleepMs(20)
	}
	t.Fatalf("table %s still exists 10s after DeleteTable", name)
}

func TestConformance_ListTables_Pagination(t *testing.T) {
	t.Parallel()
	mine := map[string]bool{}
	for i := 0; i < 3; i++ {
		mine[hashTable(t)] = true
	}
	seen := map[string]bool{}
	var start *string
	pages := 0
	for {
		out, err := ddb(t).ListTables(ctx(t), &dynamodb.ListTablesInput{Limit: aws.Int32(2), ExclusiveStartTableName: start})
		noErr(t, err, "ListTables")
		if len(out.TableNames) > 2 {
			t.Fatalf("ListTables Limit 2 returned %d names", len(out.TableNames))
		}
		for i, nme := range out.TableNames {
			if i > 0 && out.TableNames[i-1] >= nme {
				t.Fatalf("ListTables not in ascending order: %v", out.TableNames)
			}
			seen[nme] = true
		}
		pages++
		if out.LastEvaluatedTableName == nil {
			break
		}
		start = out.LastEvaluatedTableName
		if pages > 10000 {
			t.Fatal("ListTables never ended")
		}
	}
	for nme := range mine {
		if !seen[nme] {
			t.Errorf("table %s missing from ListTables", nme)
		}
	}
}

func TestConformance_UpdateTable_StreamOnOff(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	name := hashTable(t)
	c := ddb(t)
	_, err := c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(name),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}})
	noErr(t, err, "UpdateTable enable stream")
	d := waitActive(t, name)
	if d.StreamSpecification == nil || !aws.ToBool(d.StreamSpecification.StreamEnabled) || d.LatestStreamArn == nil {
		t.Fatalf("after enabling: StreamSpecification = %+v, LatestStreamArn = %v", d.StreamSpecification, d.LatestStreamArn)
	}
	// AWS: enabling a stream on a table that already has one is a ValidationException.
	_, err = c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(name),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}})
	requireValidation(t, err, "enable a stream twice")
	_, err = c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(name),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}})
	noErr(t, err, "UpdateTable disable stream")
	d = waitActive(t, name)
	if d.StreamSpecification != nil && aws.ToBool(d.StreamSpecification.StreamEnabled) {
		t.Fatalf("after disabling: StreamSpecification = %+v, want not enabled", d.StreamSpecification)
	}
	// AWS: disabling a stream on a table that has none is a ValidationException.
	_, err = c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(name),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}})
	requireValidation(t, err, "disable a stream that is off")
}

func TestConformance_TimeToLive_EnableDescribe(t *testing.T) {
	t.Parallel()
	name := hashTable(t)
	c := ddb(t)
	d, err := c.DescribeTimeToLive(ctx(t), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	noErr(t, err, "DescribeTimeToLive")
	if d.TimeToLiveDescription == nil || d.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusDisabled {
		t.Fatalf("new table TTL = %+v, want DISABLED", d.TimeToLiveDescription)
	}
	requireOps(t, "UpdateTimeToLive")
	out, err := c.UpdateTimeToLive(ctx(t), &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expires"), Enabled: aws.Bool(true)}})
	noErr(t, err, "UpdateTimeToLive")
	if out.TimeToLiveSpecification == nil || aws.ToString(out.TimeToLiveSpecification.AttributeName) != "expires" || !aws.ToBool(out.TimeToLiveSpecification.Enabled) {
		t.Fatalf("UpdateTimeToLive answered %+v", out.TimeToLiveSpecification)
	}
	d, err = c.DescribeTimeToLive(ctx(t), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	noErr(t, err, "DescribeTimeToLive")
	st := d.TimeToLiveDescription.TimeToLiveStatus
	if (st != types.TimeToLiveStatusEnabled && st != types.TimeToLiveStatusEnabling) || aws.ToString(d.TimeToLiveDescription.AttributeName) != "expires" {
		t.Fatalf("after enabling TTL: %+v, want ENABLED/ENABLING on expires", d.TimeToLiveDescription)
	}
	// AWS: enabling TTL when it is already enabled is a ValidationException.
	_, err = c.UpdateTimeToLive(ctx(t), &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expires"), Enabled: aws.Bool(true)}})
	requireValidation(t, err, "enable TTL twice")
}

func TestConformance_TimeToLive_UnknownTable(t *testing.T) {
	t.Parallel()
	_, err := ddb(t).DescribeTimeToLive(ctx(t), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(tableName(t) + "_missing")})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("want ResourceNotFoundException, got %v", err)
	}
}
